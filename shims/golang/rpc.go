// rpc.go owns the JSON-RPC 2.0 channel over stdio (shim protocol v1 framing): one
// compact JSON object per line each way, a single writer lock, and the shim's own
// requests to the host (host.*) matched to their responses by id. The reader is one
// goroutine; every incoming request runs on its own goroutine, so several host
// callbacks (concurrent WaitFor calls) can be outstanding at once.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codePort           = -32001
	codeUnsupported    = -32002
	codeVersion        = -32003
	maxLineBytes       = 8 << 20
)

// rpcError is a JSON-RPC error object, both the ones we send and the host's.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// message is any incoming line: a request (Method set) or a response to one of ours.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type reply struct {
	result json.RawMessage
	err    *rpcError
}

type channel struct {
	out     *bufio.Writer
	writeMu sync.Mutex

	mu      sync.Mutex
	nextID  int
	waiting map[string]chan reply
	running map[string]context.CancelFunc
}

func newChannel(w io.Writer) *channel {
	return &channel{out: bufio.NewWriter(w), waiting: map[string]chan reply{}, running: map[string]context.CancelFunc{}}
}

// send writes one message as one line. encoding/json never emits a raw newline.
func (c *channel) send(v any) {
	line, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "golang shim: cannot encode a message: %v\n", err)
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.out.Write(line)
	c.out.WriteByte('\n')
	c.out.Flush()
}

func (c *channel) respond(id json.RawMessage, result any) {
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (c *channel) fail(id json.RawMessage, err *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": err})
}

// request sends a host.* request and waits for its response (or for ctx to end).
func (c *channel) request(ctx context.Context, method string, params any, into any) error {
	c.mu.Lock()
	c.nextID++
	id := "go-" + strconv.Itoa(c.nextID)
	wait := make(chan reply, 1)
	c.waiting[id] = wait
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case r := <-wait:
		if r.err != nil {
			return fmt.Errorf("%s failed on the host: %s", method, r.err.Message)
		}
		if into == nil {
			return nil
		}
		return json.Unmarshal(r.result, into)
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *channel) deliver(m message) {
	var id string
	if err := json.Unmarshal(m.ID, &id); err != nil {
		id = string(m.ID)
	}
	c.mu.Lock()
	wait, ok := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if !ok {
		fmt.Fprintf(os.Stderr, "golang shim: response to unknown id %s\n", m.ID)
		return
	}
	wait <- reply{result: m.Result, err: m.Error}
}

// serve reads stdin until it closes or a shutdown arrives; handle runs each request.
func (c *channel) serve(in io.Reader, handle func(ctx context.Context, method string, params json.RawMessage) (any, *rpcError)) {
	reader := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > maxLineBytes+1 {
			c.fail(nil, &rpcError{Code: codeInvalidRequest, Message: "message longer than 8 MiB"})
		} else if len(trimSpace(line)) > 0 {
			if c.dispatch(line, handle) {
				return
			}
		}
		if err != nil {
			return // stdin closed: exit like a shutdown
		}
	}
}

// dispatch handles one line; it returns true after a shutdown.
func (c *channel) dispatch(line []byte, handle func(context.Context, string, json.RawMessage) (any, *rpcError)) bool {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.fail(nil, &rpcError{Code: codeParse, Message: "parse error: " + err.Error()})
		return false
	}
	switch {
	case m.Method == "":
		c.deliver(m)
	case m.Method == "shutdown":
		c.respond(m.ID, map[string]any{})
		return true
	case m.Method == "$/cancel":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		cancel := c.running[string(p.ID)]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		ctx, cancel := context.WithCancel(context.Background())
		key := string(m.ID)
		c.mu.Lock()
		c.running[key] = cancel
		c.mu.Unlock()
		go func() {
			defer func() {
				c.mu.Lock()
				delete(c.running, key)
				c.mu.Unlock()
				cancel()
			}()
			result, rerr := c.safeHandle(ctx, handle, m)
			if m.ID == nil {
				return // a notification wants no answer
			}
			if rerr != nil {
				c.fail(m.ID, rerr)
			} else {
				c.respond(m.ID, result)
			}
		}()
	}
	return false
}

// safeHandle turns a panic in the shim or the port into an internal error reply.
func (c *channel) safeHandle(ctx context.Context, handle func(context.Context, string, json.RawMessage) (any, *rpcError), m message) (result any, rerr *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "golang shim: panic in %s: %v\n", m.Method, p)
			result, rerr = nil, &rpcError{Code: codeInternal, Message: fmt.Sprintf("panic: %v", p)}
		}
	}()
	return handle(ctx, m.Method, m.Params)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
