// tools.go builds the port's Toolkit from a protocol <toolkit> (protocol v1.1: the
// "register" tools are then added in one Toolkit.Register call): relay tools through the
// port's RelayTool, native tools as tn.Tool literals whose Execute plays the scenario's
// behaviour vocabulary (reply / fail / suspend+then / alwaysSuspend / delayMs) and
// records each execution.
//
// Call ids: the port's ToolContext carries no call id. The shim always installs a
// BeforeTool hook (it returns no override unless the scenario asked for hooks), which
// sees the call id and the exact args map the loop then hands to Execute (and, on a
// WaitFor retry, hands again). The recorder keys call ids by that map's identity.
package main

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	tn "github.com/muthuishere/toolnexus/golang"
)

type toolkitSpec struct {
	Builtins bool       `json:"builtins"`
	Tools    []toolSpec `json:"tools"`
	Register []toolSpec `json:"register"` // protocol v1.1: added after construction
}

type toolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
	Relay       bool           `json:"relay"`
	Behaviour   *behaviour     `json:"behaviour"`
}

type behaviour struct {
	Reply         *string         `json:"reply"`
	Fail          *string         `json:"fail"`
	Suspend       json.RawMessage `json:"suspend"`
	AlwaysSuspend json.RawMessage `json:"alwaysSuspend"`
	Metadata      map[string]any  `json:"metadata"` // a reply's or failure's own metadata
	Then          *struct {
		Reply                 *string `json:"reply"`
		ReplyWithAnswerOutput bool    `json:"replyWithAnswerOutput"`
	} `json:"then"`
	DelayMs int `json:"delayMs"`
}

type execution struct {
	Tool     string         `json:"tool"`
	CallID   string         `json:"callId"`
	Args     map[string]any `json:"args"`
	Answered bool           `json:"answered"`
}

// recorder collects what one run observed; tools and hooks run on many goroutines.
type recorder struct {
	mu         sync.Mutex
	executions []execution
	metrics    []map[string]any
	callOfArgs map[uintptr]string
	argsKept   []map[string]any // keeps keyed maps alive so their addresses stay unique
}

func newRecorder() *recorder { return &recorder{callOfArgs: map[uintptr]string{}} }

func (r *recorder) noteCall(args map[string]any, callID string) {
	if args == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.callOfArgs[reflect.ValueOf(args).Pointer()] = callID
	r.argsKept = append(r.argsKept, args)
}

func (r *recorder) executed(tool string, args map[string]any, answered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := ""
	if args != nil {
		id = r.callOfArgs[reflect.ValueOf(args).Pointer()]
	}
	r.executions = append(r.executions, execution{Tool: tool, CallID: id, Args: args, Answered: answered})
}

func (r *recorder) metric(ev tn.MetricEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = append(r.metrics, neutralMetric(ev))
}

func buildToolkit(ctx context.Context, spec toolkitSpec, rec *recorder) (*tn.Toolkit, error) {
	tk, err := tn.CreateToolkit(ctx, tn.Options{Builtins: spec.Builtins, ExtraTools: portTools(spec.Tools, rec)})
	if err != nil || len(spec.Register) == 0 {
		return tk, err
	}
	// Register returns no error: what it keeps or refuses is the port's behaviour under test.
	return tk.Register(portTools(spec.Register, rec)...), nil
}

func portTools(specs []toolSpec, rec *recorder) []tn.Tool {
	tools := make([]tn.Tool, 0, len(specs))
	for _, t := range specs {
		if t.Relay {
			var schema tn.JSONSchema
			if t.Schema != nil {
				schema = tn.JSONSchema(t.Schema)
			}
			tools = append(tools, relayTool(t.Name, t.Description, schema))
			continue
		}
		tools = append(tools, nativeTool(t, rec))
	}
	return tools
}

func nativeTool(spec toolSpec, rec *recorder) tn.Tool {
	schema := tn.JSONSchema(spec.Schema)
	if schema == nil {
		schema = tn.JSONSchema{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	}
	b := spec.Behaviour
	if b == nil {
		b = &behaviour{}
	}
	return tn.Tool{
		Name:        spec.Name,
		Description: spec.Description,
		InputSchema: schema,
		Source:      tn.SourceNative,
		Execute: func(args map[string]any, tctx *tn.ToolContext) (tn.ToolResult, error) {
			var answer *tn.Answer
			if tctx != nil {
				answer = tctx.Answer
			}
			rec.executed(spec.Name, args, answer != nil)
			if b.DelayMs > 0 {
				time.Sleep(time.Duration(b.DelayMs) * time.Millisecond)
			}
			switch {
			case b.Reply != nil:
				return tn.ToolResult{Output: *b.Reply, Metadata: b.Metadata}, nil
			case b.Fail != nil:
				return tn.ToolResult{Output: *b.Fail, IsError: true, Metadata: b.Metadata}, nil
			case b.AlwaysSuspend != nil:
				return suspension(b.AlwaysSuspend)
			case answer == nil:
				return suspension(b.Suspend)
			case b.Then != nil && b.Then.Reply != nil:
				return tn.ToolResult{Output: *b.Then.Reply}, nil
			default:
				output, _ := answer.Data["output"].(string)
				return tn.ToolResult{Output: output}, nil
			}
		},
	}
}

// suspension decodes the scenario's Request into the port's own type and suspends
// with the port's helper (the given id is kept).
func suspension(raw json.RawMessage) (tn.ToolResult, error) {
	var req tn.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		return tn.ToolResult{}, err
	}
	return tn.Pending(req), nil
}
