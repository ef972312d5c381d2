// Command loadtest measures the Bunting proxy under load next to a baseline:
// a minimal Go net/http server that answers every request with the bytes the
// proxy answered, evaluating nothing. Both run as separate processes on
// loopback, and the closed-loop load generator in this process shares the
// machine's cores with them. It prints a markdown table of requests per
// second, the ratio to the baseline, and the proxy's resident memory.
//
//	go run . -duration 4s
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// config is the benchmark's settings, from the command line.
type config struct {
	repo       string
	bunting    string
	flagCounts []int
	duration   time.Duration
	warmup     time.Duration
	conns      int
	seed       int64
	// serverFlags, when positive, also benchmarks `bunting server`'s
	// client-features endpoint seeded with that many flags.
	serverFlags int
	// usageFlags, when positive, also benchmarks SDK usage reports of that
	// many flags (usage.go).
	usageFlags int
	// only, when not empty, keeps the proxy and usage scenarios whose name contains
	// one of these texts (with their baselines).
	only []string
}

func main() {
	if path, ok := os.LookupEnv(baselineEnv); ok {
		if err := serveBaseline(path); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(2)
	}
	report, err := run(cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
	fmt.Print(report.markdown())
}

// parseConfig reads the command line.
func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	cfg := config{}
	counts := fs.String("flags", "100,1000", "comma-separated flag counts of the proxy's generated payloads (empty: skip the proxy)")
	fs.StringVar(&cfg.repo, "repo", "..", "repository root to build ./cmd/bunting from")
	fs.StringVar(&cfg.bunting, "bunting", "", "prebuilt bunting binary (skips the build)")
	fs.DurationVar(&cfg.duration, "duration", 4*time.Second, "measured time per scenario and server")
	fs.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "unmeasured load before each measurement")
	fs.IntVar(&cfg.conns, "conns", 16, "concurrent keep-alive connections")
	fs.Int64Var(&cfg.seed, "seed", 1, "seed of the generated payloads")
	fs.IntVar(&cfg.serverFlags, "server-flags", 1000, "also benchmark bunting server's /api/client/features with this many flags (0: skip)")
	fs.IntVar(&cfg.usageFlags, "usage-flags", 50, "also benchmark SDK usage reports of this many flags, on SQLite and, with TEST_POSTGRES_URL, PostgreSQL (0: skip)")
	only := fs.String("only", "", "comma-separated texts: measure only the proxy and usage scenarios whose name contains one (empty: all)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	for _, s := range strings.Split(*counts, ",") {
		if strings.TrimSpace(*counts) == "" {
			break // only the server, if asked for
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 5 {
			return cfg, fmt.Errorf("-flags: %q is not a flag count of at least 5", s)
		}
		cfg.flagCounts = append(cfg.flagCounts, n)
	}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.only = append(cfg.only, s)
		}
	}
	if cfg.duration <= 0 || cfg.duration > time.Minute {
		return cfg, fmt.Errorf("-duration must be between 0 and 1m, got %v", cfg.duration)
	}
	if cfg.conns < 1 || cfg.conns > 256 {
		return cfg, fmt.Errorf("-conns must be between 1 and 256, got %d", cfg.conns)
	}
	return cfg, nil
}
