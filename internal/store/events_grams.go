package store

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The free-text index of events holds trigrams. A rare text such as
// "flag-4242" is made of trigrams that every event carries ("fla", "lag",
// "ag-") and a few that are rare ("424", "242"); asking the index for all of
// them reads the long lists of the common ones, so search asks only for the
// rarest few and checks the whole text on the candidate rows. Which
// trigrams are rare is estimated from a random sample of events kept in
// memory: the estimate only steers speed, never which events match.

const (
	// gramSampleSize is how many events the estimate reads, in
	// gramSampleBlocks runs of consecutive ids.
	gramSampleSize   = 1000
	gramSampleBlocks = 40
	// gramSampleMaxAge is how long a sample is used before it is redrawn;
	// it is also redrawn when the event log has doubled since.
	gramSampleMaxAge = 10 * time.Minute
	// searchGrams is how many of the rarest trigrams a search asks the
	// index for.
	searchGrams = 3
)

// gramSample counts, per trigram, the sampled events that contain it.
type gramSample struct {
	at     time.Time
	latest int64
	docs   int
	counts map[string]int
}

// rareGrams returns up to searchGrams distinct trigrams of needle, rarest
// first by the sample, and the sampled share of events that contain the
// rarest (an upper bound of the share that contain needle); keep drops
// trigrams the index cannot look up.
func (s *Store) rareGrams(ctx context.Context, needle string, keep func(string) bool) ([]string, float64, error) {
	grams := trigrams(needle)
	grams = slices.DeleteFunc(grams, func(g string) bool { return !keep(g) })
	if len(grams) == 0 {
		return nil, 1, nil
	}
	sample, err := s.gramSample(ctx)
	if err != nil {
		return nil, 0, err
	}
	// Stable: among equally rare trigrams, the needle's order is kept.
	slices.SortStableFunc(grams, func(a, b string) int { return sample.counts[a] - sample.counts[b] })
	// Past the rarest, a trigram in more than a tenth of the events costs
	// the index more than it narrows the candidates.
	n := 1
	for n < min(searchGrams, len(grams)) && sample.counts[grams[n]]*10 <= sample.docs {
		n++
	}
	return grams[:n], float64(sample.counts[grams[0]]) / float64(max(sample.docs, 1)), nil
}

// gramSample returns the current sample. The first search draws it; a
// stale one is redrawn in the background while searches keep using it, so
// no request waits for a redraw.
func (s *Store) gramSample(ctx context.Context) (*gramSample, error) {
	latest := s.Revision()
	cur := s.grams.Load()
	if cur != nil && time.Since(cur.at) < gramSampleMaxAge && latest < 2*cur.latest+gramSampleSize {
		return cur, nil
	}
	if cur != nil {
		if s.gramsMu.TryLock() {
			go func() {
				defer s.gramsMu.Unlock()
				bg, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if next, err := s.drawGramSample(bg, latest); err == nil {
					s.grams.Store(next)
				}
			}()
		}
		return cur, nil
	}
	s.gramsMu.Lock()
	defer s.gramsMu.Unlock()
	if cur = s.grams.Load(); cur != nil {
		return cur, nil
	}
	next, err := s.drawGramSample(ctx, latest)
	if err != nil {
		return nil, err
	}
	s.grams.Store(next)
	return next, nil
}

// drawGramSample reads the search text of gramSampleBlocks runs of
// consecutive events at random places (all events when there are few; runs
// rather than single rows keep the reads few) and counts their trigrams.
func (s *Store) drawGramSample(ctx context.Context, latest int64) (*gramSample, error) {
	query := `SELECT ` + eventText + ` FROM events e`
	if latest > 2*gramSampleSize {
		var blocks []string
		for range gramSampleBlocks {
			from := 1 + rand.Int64N(latest-gramSampleSize/gramSampleBlocks)
			blocks = append(blocks, query+` WHERE e.id BETWEEN `+strconv.FormatInt(from, 10)+` AND `+strconv.FormatInt(from+gramSampleSize/gramSampleBlocks-1, 10))
		}
		query = strings.Join(blocks, " UNION ALL ")
	}
	sample := &gramSample{at: time.Now(), latest: latest, counts: map[string]int{}}
	var text string
	err := s.Q(ctx).eachRow(func(row scanner) error {
		if err := row.Scan(&text); err != nil {
			return err
		}
		for _, g := range trigrams(strings.ToLower(text)) {
			sample.counts[g]++
		}
		sample.docs++
		return nil
	}, query)
	if err != nil {
		return nil, err
	}
	return sample, nil
}

// trigrams returns the distinct three-character substrings of s in order.
func trigrams(s string) []string {
	runes := []rune(s)
	var out []string
	seen := map[string]bool{}
	for i := 0; i+3 <= len(runes); i++ {
		if g := string(runes[i : i+3]); !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// gramRuns returns the runs of needle that the given trigrams cover, where
// trigrams starting one character apart join (so "424" and "242" of
// "flag-4242" make "4242", whose trigrams are just those two). Joining
// trigrams further apart would bring in trigrams between them.
func gramRuns(needle string, grams []string) []string {
	runes := []rune(needle)
	var starts []int
	for _, g := range grams {
		for i := 0; i+3 <= len(runes); i++ {
			if string(runes[i:i+3]) == g {
				starts = append(starts, i)
				break
			}
		}
	}
	slices.Sort(starts)
	var runs []string
	for i := 0; i < len(starts); {
		j := i
		for j+1 < len(starts) && starts[j+1] == starts[j]+1 {
			j++
		}
		runs = append(runs, string(runes[starts[i]:starts[j]+3]))
		i = j + 1
	}
	return runs
}

// isWordGram reports whether g is three ASCII letters or digits: a trigram
// PostgreSQL's pg_trgm indexes as such (it splits words at other characters).
func isWordGram(g string) bool {
	for i := range len(g) {
		if c := g[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return len(g) == 3
}
