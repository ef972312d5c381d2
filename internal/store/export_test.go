package store

// SetRecentEventsScanned changes how many of the newest events a free-text
// search scans before it asks the text index, until restore is called.
func SetRecentEventsScanned(n int64) (restore func()) {
	old := recentEventsScanned
	recentEventsScanned = n
	return func() { recentEventsScanned = old }
}
