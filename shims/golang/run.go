// run.go owns client.run: building the port's Client from the protocol params (retries
// off, explicit key), forwarding WaitFor / the conversation store / hooks to the host,
// calling the requested entry point and answering with the neutral result.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"

	tn "github.com/muthuishere/toolnexus/golang"
)

type runParams struct {
	Style        string          `json:"style"`
	BaseURL      string          `json:"baseUrl"`
	Model        string          `json:"model"`
	APIKey       string          `json:"apiKey"`
	MaxTurns     int             `json:"maxTurns"`
	SystemPrompt string          `json:"systemPrompt"`
	Entry        string          `json:"entry"`
	Prompt       string          `json:"prompt"`
	History      []any           `json:"history"`
	ID           string          `json:"id"`
	Toolkit      toolkitSpec     `json:"toolkit"`
	WaitFor      bool            `json:"waitFor"`
	Store        bool            `json:"store"`
	Hooks        []string        `json:"hooks"`
	Pending      json.RawMessage `json:"pending"`
	Answer       json.RawMessage `json:"answer"`
}

// countingTransport counts provider requests, so a refused resume (no request made)
// can be told from a resumed run that failed later.
type countingTransport struct{ n atomic.Int64 }

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func runEntry(ctx context.Context, ch *channel, raw json.RawMessage) (any, *rpcError) {
	var p runParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "client.run: " + err.Error()}
	}
	rec := newRecorder()
	tk, err := buildToolkit(ctx, p.Toolkit, rec)
	if err != nil {
		return nil, portError("toolkit", err)
	}
	transport := &countingTransport{}
	opts := tn.ClientOptions{
		BaseURL:      p.BaseURL,
		Style:        tn.ClientStyle(p.Style),
		Model:        p.Model,
		APIKey:       p.APIKey,
		SystemPrompt: p.SystemPrompt,
		MaxTurns:     p.MaxTurns,
		// Retries 0 means "default 2" in this port; a classifier that always fails is
		// how a Go host turns retries off.
		OnError:    func(tn.ErrorInfo) tn.Tier { return tn.TierFail },
		OnMetric:   rec.metric,
		Hooks:      hooks(ctx, ch, rec, p.Hooks),
		HTTPClient: &http.Client{Transport: transport},
	}
	// A stream's WaitFor tells the host whether the consumer got the pending event first.
	var seen *sightings
	if p.Entry == "stream" {
		seen = newSightings()
	}
	if p.WaitFor {
		opts.WaitFor = func(req tn.Request) (tn.Answer, error) {
			var reply struct {
				Answer tn.Answer `json:"answer"`
			}
			params := map[string]any{"request": req}
			if seen != nil {
				params["pendingEventSeen"] = seen.waitSeen(req.ID)
			}
			err := ch.request(ctx, "host.waitFor", params, &reply)
			return reply.Answer, err
		}
	}
	if p.Store {
		opts.Store = hostStore{ctx: ctx, ch: ch}
	}
	client := tn.CreateClient(opts)

	var result tn.RunResult
	events := []json.RawMessage{}
	switch p.Entry {
	case "run":
		result, err = client.RunWithHistory(ctx, p.Prompt, tk, p.History)
	case "ask":
		result, err = client.Ask(ctx, p.Prompt, tk, p.ID)
	case "stream":
		result, events, err = stream(ctx, client, tk, p, seen)
	case "runWithAnswer", "askWithAnswer":
		var pending tn.Request
		var answer tn.Answer
		if jerr := errors.Join(json.Unmarshal(p.Pending, &pending), json.Unmarshal(p.Answer, &answer)); jerr != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: "client.run: pending/answer: " + jerr.Error()}
		}
		result, err = resume(ctx, client, tk, p, pending, answer)
	default:
		return nil, &rpcError{Code: codeInvalidParams, Message: "client.run: unknown entry " + p.Entry}
	}
	if err != nil {
		return nil, portError(errorKind(p.Entry, err, transport.n.Load()), err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return map[string]any{
		"result":     neutralResult(result),
		"events":     events,
		"metrics":    rec.metrics,
		"executions": append([]execution{}, rec.executions...),
	}, nil
}

func stream(ctx context.Context, client *tn.Client, tk *tn.Toolkit, p runParams, seen *sightings) (tn.RunResult, []json.RawMessage, error) {
	events := []json.RawMessage{}
	ch, err := client.StreamWithID(ctx, p.Prompt, tk, p.ID)
	if err != nil {
		return tn.RunResult{}, events, err
	}
	var result *tn.RunResult
	var failure error
	for ev := range ch {
		if ev.Type == "error" {
			failure = ev.Err
			continue
		}
		encoded, err := neutralEvent(ev)
		if err != nil {
			return tn.RunResult{}, events, err
		}
		events = append(events, encoded)
		if ev.Type == "pending" && ev.Request != nil {
			seen.saw(ev.Request.ID)
		}
		if ev.Type == "done" {
			result = ev.Result
		}
	}
	if failure != nil {
		return tn.RunResult{}, events, failure
	}
	if result == nil {
		return tn.RunResult{}, events, errors.New("the stream closed without a done event")
	}
	return *result, events, nil
}

// errorKind classifies a port failure for the protocol. The port has no typed errors:
// its provider failures read "LLM <status>: ...", and a resume it refuses fails before
// any provider request.
func errorKind(entry string, err error, requests int64) string {
	switch {
	case strings.HasPrefix(err.Error(), "LLM "):
		return "provider"
	case (entry == "runWithAnswer" || entry == "askWithAnswer") && requests == 0:
		return "resume"
	default:
		return "run"
	}
}

// hooks always installs BeforeTool (to learn call ids, see tools.go); it forwards to
// the host only the hooks the scenario asked for.
func hooks(ctx context.Context, ch *channel, rec *recorder, names []string) *tn.Hooks {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	h := &tn.Hooks{
		BeforeTool: func(_ context.Context, ev tn.BeforeToolEvent) (*tn.ToolOverride, error) {
			var override *tn.ToolOverride
			if want["beforeTool"] {
				var reply struct {
					Override *struct {
						Args    map[string]any  `json:"args"`
						Suspend json.RawMessage `json:"suspend"`
					} `json:"override"`
				}
				event := map[string]any{"name": ev.Name, "args": ev.Args, "callId": ev.ID}
				if err := ch.request(ctx, "host.hook", map[string]any{"name": "beforeTool", "event": event}, &reply); err != nil {
					return nil, err
				}
				if o := reply.Override; o != nil && o.Suspend != nil {
					suspended, err := suspension(o.Suspend)
					if err != nil {
						return nil, err
					}
					override = &tn.ToolOverride{Result: &suspended}
				} else if o != nil && o.Args != nil {
					override = &tn.ToolOverride{Args: o.Args}
				}
			}
			args := ev.Args
			if override != nil && override.Args != nil {
				args = override.Args
			}
			rec.noteCall(args, ev.ID)
			return override, nil
		},
	}
	if want["afterTool"] {
		h.AfterTool = func(_ context.Context, ev tn.AfterToolEvent) (*tn.ToolOverride, error) {
			event := map[string]any{
				"name": ev.Name, "args": ev.Args, "callId": ev.ID,
				"result": map[string]any{"output": ev.Result.Output, "isError": ev.Result.IsError},
			}
			return nil, ch.request(ctx, "host.hook", map[string]any{"name": "afterTool", "event": event}, nil)
		}
	}
	return h
}

// hostStore is the port's ConversationStore, forwarded to host.store.*.
type hostStore struct {
	ctx context.Context
	ch  *channel
}

func (s hostStore) Get(id string) ([]any, error) {
	var reply struct {
		Messages []any `json:"messages"`
	}
	err := s.ch.request(s.ctx, "host.store.get", map[string]any{"id": id}, &reply)
	return reply.Messages, err
}

func (s hostStore) Save(id string, messages []any) error {
	return s.ch.request(s.ctx, "host.store.save", map[string]any{"id": id, "messages": messages}, nil)
}
