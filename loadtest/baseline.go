package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

// recorded is one response of the proxy, replayed by the baseline.
type recorded struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// recordingKey identifies a request: method, target, the headers that
// choose the answer (If-None-Match, Accept-Encoding) and body.
func recordingKey(method, target, ifNoneMatch, acceptEncoding string, body []byte) string {
	return method + " " + target + "\n" + ifNoneMatch + "\n" + acceptEncoding + "\n" + string(body)
}

// baselineEnv names the environment variable that turns this program into
// the baseline server: it holds the path of the recordings file.
const baselineEnv = "BUNTING_LOADTEST_BASELINE"

// baselineHandler is the minimal Go server the proxy is compared with: it
// reads the request like any server must, then writes the bytes the proxy
// answered to the same request, evaluating nothing.
func baselineHandler(recordings map[string]*recorded) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec, ok := recordings[recordingKey(r.Method, r.RequestURI, r.Header.Get("If-None-Match"), r.Header.Get("Accept-Encoding"), body)]
		if !ok {
			http.Error(w, "no recording for this request", http.StatusNotFound)
			return
		}
		h := w.Header()
		for k, v := range rec.Header {
			h[k] = v
		}
		w.WriteHeader(rec.Status)
		_, _ = w.Write(rec.Body)
	})
}

// serveBaseline runs the baseline server for the recordings in path on a
// free loopback port, printing "listening <addr>" once it accepts.
func serveBaseline(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var recordings map[string]*recorded
	if err := json.Unmarshal(data, &recordings); err != nil {
		return fmt.Errorf("recordings %s: %w", path, err)
	}
	for _, rec := range recordings {
		if rec.Header.Get("Content-Length") == "" && rec.Status != http.StatusNotModified && rec.Status != http.StatusNoContent {
			rec.Header.Set("Content-Length", strconv.Itoa(len(rec.Body)))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", ln.Addr())
	return http.Serve(ln, baselineHandler(recordings))
}

// writeRecordings stores recordings for a baseline process.
func writeRecordings(path string, recordings map[string]*recorded) error {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(recordings); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}
