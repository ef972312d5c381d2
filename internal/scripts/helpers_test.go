package scripts_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/scripts"
)

// calm gives calls that must succeed a deadline no loaded, shared test
// machine reaches; tests of the deadline itself set their own.
var calm = scripts.Options{Timeout: 5 * time.Second}

func itoa(i int) string { return strconv.Itoa(i) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
