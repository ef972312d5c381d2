package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine/enginetest"
	"github.com/bunting-flags/bunting/proxy"
)

func loadRun(addr string, reqBytes []byte, conns int, d time.Duration) float64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				panic(err)
			}
			defer c.Close()
			br := bufio.NewReaderSize(c, 1<<16)
			for time.Now().Before(stop) {
				c.Write(reqBytes)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					panic(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					panic(resp.StatusCode)
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / d.Seconds()
}

func TestZZLoad(t *testing.T) {
	if os.Getenv("ZZLOAD") == "" {
		t.Skip()
	}
	for _, nflags := range []int{100, 1000} {
		payload, _ := json.Marshal(enginetest.Generate(nflags, 1))
		up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(payload) })}
		ul, _ := net.Listen("tcp", "127.0.0.1:0")
		go up.Serve(ul)
		cfg := proxy.DefaultConfig()
		cfg.UpstreamURL, cfg.UpstreamAPIToken, cfg.ClientKeys = "http://"+ul.Addr().String()+"/api", "t", []string{clientKey}
		p, _ := proxy.New(cfg, proxy.WithStorageProvider(nil))
		ctx, cancel := context.WithCancel(context.Background())
		go p.Run(ctx)
		<-p.ReadyChan()
		pl, _ := net.Listen("tcp", "127.0.0.1:0")
		go (&http.Server{Handler: p}).Serve(pl)
		q := browserQuery()
		var names []string
		for i := 0; i < 5; i++ {
			names = append(names, p.Snapshot().Name(i*(nflags/5)))
		}
		c := enginetest.Context()
		body, _ := json.Marshal(map[string]any{"toggles": names, "context": map[string]any{"userId": c.UserID, "sessionId": c.SessionID, "appName": c.AppName, "environment": c.Environment, "properties": c.Properties}})
		reqs := map[string]string{
			"GET /proxy":  "GET /proxy?" + q + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + clientKey + "\r\n\r\n",
			"POST 5":      fmt.Sprintf("POST /proxy HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", clientKey, len(body), body),
			"GET health": "GET /proxy/health HTTP/1.1\r\nHost: x\r\n\r\n",
		}
		for name, raw := range reqs {
			// record
			cn, _ := net.Dial("tcp", pl.Addr().String())
			cn.Write([]byte(raw))
			resp, _ := http.ReadResponse(bufio.NewReader(cn), nil)
			rb, _ := io.ReadAll(resp.Body)
			hdr := resp.Header.Clone()
			cn.Close()
			bl, _ := net.Listen("tcp", "127.0.0.1:0")
			bs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				for k, v := range hdr {
					w.Header()[k] = v
				}
				w.WriteHeader(200)
				w.Write(rb)
			})}
			go bs.Serve(bl)
			var pr, br float64
			for round := 0; round < 2; round++ {
				pr += loadRun(pl.Addr().String(), []byte(raw), 16, 2*time.Second)
				br += loadRun(bl.Addr().String(), []byte(raw), 16, 2*time.Second)
			}
			t.Logf("flags=%d %-10s proxy %8.0f req/s  baseline %8.0f req/s  ratio %.2f  body %d", nflags, name, pr/2, br/2, pr/br, len(rb))
			bs.Close()
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t.Logf("heap in use %d MB", ms.HeapInuse>>20)
		cancel()
		up.Close()
		_ = strings.TrimSpace
		_ = bytes.MinRead
	}
}
