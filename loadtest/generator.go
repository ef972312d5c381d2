package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// request is one prepared HTTP/1.1 request, written to the wire as is.
type request struct {
	method string
	target string // path and query
	header map[string]string
	body   []byte
	status int // the expected status; 0 means 200
}

// wantStatus is the status a correct answer has.
func (r request) wantStatus() int {
	if r.status == 0 {
		return 200
	}
	return r.status
}

// wire renders the request for a keep-alive connection to host.
func (r request) wire(host string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.method, r.target, host)
	for k, v := range r.header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if r.body != nil {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("\r\n")
	b.Write(r.body)
	return b.Bytes()
}

// loadResult is what one bounded closed-loop run measured.
type loadResult struct {
	requests int64
	failures int64
	elapsed  time.Duration
	// serverCPU is the CPU time the server under test used meanwhile.
	serverCPU time.Duration
	// serverUser and serverSys split the server's CPU time as the kernel
	// accounts it (in clock ticks, coarser than serverCPU); clientCPU is
	// the load generator's own CPU time meanwhile (it shares the cores).
	serverUser, serverSys, clientCPU time.Duration
	firstErr                         error
}

// plus adds another run's counts and time to r.
func (r loadResult) plus(o loadResult) loadResult {
	r.requests += o.requests
	r.failures += o.failures
	r.elapsed += o.elapsed
	r.serverCPU += o.serverCPU
	r.serverUser += o.serverUser
	r.serverSys += o.serverSys
	r.clientCPU += o.clientCPU
	if r.firstErr == nil {
		r.firstErr = o.firstErr
	}
	return r
}

// cpuPerRequest is the server's CPU time per successful request.
func (r loadResult) cpuPerRequest() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.serverCPU / time.Duration(r.requests)
}

func (r loadResult) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// runLoad keeps conns keep-alive connections busy for d, each sending the
// requests round-robin and waiting for each response before the next (a
// closed loop, like wrk). Only responses with the expected status count
// as successes. The generator parses responses minimally so that it leaves
// as much of the shared CPU as possible to the server under test.
func runLoad(addr string, reqs []request, conns int, d time.Duration) loadResult {
	return runLoadTimed(addr, reqs, conns, d, nil)
}

// runLoadTimed is runLoad that also appends each successful request's
// latency to lat, when lat is not nil.
func runLoadTimed(addr string, reqs []request, conns int, d time.Duration, lat *[]time.Duration) loadResult {
	wires := make([][]byte, len(reqs))
	statuses := make([]int, len(reqs))
	for i, r := range reqs {
		wires[i], statuses[i] = r.wire(addr), r.wantStatus()
	}
	var ok, failed atomic.Int64
	var errOnce sync.Once
	var firstErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	var latMu sync.Mutex
	for c := range conns {
		wg.Go(func() {
			var mine *[]time.Duration
			if lat != nil {
				mine = new([]time.Duration)
			}
			n, err := hammer(addr, wires, statuses, c, stop, mine)
			if mine != nil {
				latMu.Lock()
				*lat = append(*lat, *mine...)
				latMu.Unlock()
			}
			ok.Add(n)
			if err != nil {
				failed.Add(1)
				errOnce.Do(func() { firstErr = err })
			}
		})
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	return loadResult{requests: ok.Load(), failures: failed.Load(), elapsed: time.Since(start), firstErr: firstErr}
}

// hammer runs one connection until stop closes; it returns the number of
// responses with the expected status and the error that ended it early.
// With lat, it appends each answer's latency.
func hammer(addr string, wires [][]byte, statuses []int, offset int, stop <-chan struct{}, lat *[]time.Duration) (int64, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	var n int64
	for i := offset; ; i++ {
		select {
		case <-stop:
			return n, nil
		default:
		}
		k := i % len(wires)
		var sent time.Time
		if lat != nil {
			sent = time.Now()
		}
		if _, err := conn.Write(wires[k]); err != nil {
			return n, err
		}
		status, err := readResponse(br)
		if err != nil {
			return n, err
		}
		if status != statuses[k] {
			return n, fmt.Errorf("status %d, want %d", status, statuses[k])
		}
		if lat != nil {
			*lat = append(*lat, time.Since(sent))
		}
		n++
	}
}

// readResponse reads one HTTP/1.1 response, discarding the body (by
// Content-Length or chunked), and returns its status.
func readResponse(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := -1, false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			return 0, fmt.Errorf("bad header %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	switch {
	case chunked:
		return status, skipChunked(br)
	case length >= 0:
		_, err = br.Discard(length)
		return status, err
	case status == 204 || status == 304:
		return status, nil
	}
	return 0, errors.New("response without a length on a keep-alive connection")
}

// skipChunked discards a chunked body and its trailer.
func skipChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sizeText, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		size, err := strconv.ParseInt(string(sizeText), 16, 64)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailer lines, then the empty line
				line, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return err
		}
	}
}

// fetch sends one request through net/http and returns the whole
// response, for recording what the baseline must replay.
func fetch(addr string, r request) (*recorded, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, "http://"+addr+r.target, body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	// The recording must hold the bytes the load generator will get:
	// net/http would otherwise ask for gzip itself and decode it.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	header := resp.Header.Clone()
	header.Del("Date")
	return &recorded{Status: resp.StatusCode, Header: header, Body: data}, nil
}
