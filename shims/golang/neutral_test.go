// neutral_test.go: the shim adds nothing and cleans nothing (SPEC §6). Port values with
// nils, empty strings and absent optionals go through the shim's mapping and through
// encoding/json; each case is printed as a "HONESTY {...}" line (for
// tests/shims/test_shim_honesty.py) and checked here: the shim's bytes must equal the
// serializer's. Where the port's type has no json tags (StreamEvent, MetricEvent) the
// serializer side is the neutral shape of the event's kind with each field's own
// encoding/json value, written out by hand.
package main

import (
	"encoding/json"
	"fmt"
	"testing"

	tn "github.com/muthuishere/toolnexus/golang"
)

func honestyCase(t *testing.T, name string, shim any, serializer string) {
	t.Helper()
	got, err := json.Marshal(shim)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	line, _ := json.Marshal(map[string]string{"case": name, "shim": string(got), "serializer": serializer})
	fmt.Printf("HONESTY %s\n", line)
	if string(got) != serializer {
		t.Errorf("%s: the shim sends %s, encoding/json gives %s", name, got, serializer)
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestShimHonesty(t *testing.T) {
	request := &tn.Request{ID: "req-1", Kind: "approval", Prompt: "Allow?", Data: map[string]any{}}
	pending := tn.RunResult{
		Text:     "",
		Messages: []any{map[string]any{"role": "assistant", "content": nil}},
		ToolCalls: []tn.ToolCall{
			{Name: "t", Output: "Allow?", IsError: true, Metadata: map[string]any{"pending": request}},
			{Name: "u", Args: map[string]any{"empty": nil}},
		},
		Status:  "pending",
		Pending: request,
	}
	empty := tn.RunResult{Status: "done"} // nil Messages and ToolCalls stay null
	honestyCase(t, "RunResult pending", neutralResult(pending), marshal(t, pending))
	honestyCase(t, "RunResult empty", neutralResult(empty), marshal(t, empty))

	usage := &tn.Usage{}
	events := []struct {
		ev         tn.StreamEvent
		serializer string
	}{
		{tn.StreamEvent{Type: "text"}, `{"delta":"","type":"text"}`},
		{tn.StreamEvent{Type: "tool_call", ID: "c1", Name: "t"}, `{"args":null,"id":"c1","name":"t","type":"tool_call"}`},
		{tn.StreamEvent{Type: "tool_result", ID: "c1", Name: "t"}, `{"id":"c1","isError":false,"name":"t","output":"","type":"tool_result"}`},
		{tn.StreamEvent{Type: "usage", Usage: usage}, `{"type":"usage","usage":` + marshal(t, usage) + `}`},
		{tn.StreamEvent{Type: "usage"}, `{"type":"usage","usage":null}`},
		{tn.StreamEvent{Type: "pending", Request: request}, `{"request":` + marshal(t, request) + `,"type":"pending"}`},
		{tn.StreamEvent{Type: "done", Result: &empty}, `{"result":` + marshal(t, empty) + `,"type":"done"}`},
	}
	for _, c := range events {
		encoded, err := neutralEvent(c.ev)
		if err != nil {
			t.Fatal(err)
		}
		honestyCase(t, "stream event "+c.ev.Type, encoded, c.serializer)
	}

	metrics := []struct {
		ev         tn.MetricEvent
		serializer string
	}{
		{tn.MetricEvent{Event: "tool", Tool: "t"}, `{"event":"tool","isError":false,"ms":0,"source":"","tool":"t"}`},
		{tn.MetricEvent{Event: "tool", Tool: "t", Pending: true}, `{"event":"tool","isError":false,"ms":0,"pending":true,"source":"","tool":"t"}`},
		{tn.MetricEvent{Event: "run"}, `{"error":"","event":"run","model":"","ms":0,"toolCalls":0,"totalTokens":0,"turns":0}`},
	}
	for _, c := range metrics {
		honestyCase(t, "metric "+c.ev.Event, neutralMetric(c.ev), c.serializer)
	}
}
