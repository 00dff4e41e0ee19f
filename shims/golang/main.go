// Command golang-shim speaks shim protocol v1 (SPEC.md §6) over stdio and drives the
// golang port of toolnexus. It only translates: protocol params -> port calls
// (run.go, tools.go) and port results -> the protocol's shapes (neutral.go). Every
// judgement lives in the harness.
package main

import (
	"context"
	"encoding/json"
	"os"
)

const protocolVersion = 1

// portVersion is the release go.mod pins. The harness's build step overrides it with
// -ldflags -X, naming the checkout it built against (its newest CHANGELOG release +checkout).
var portVersion = "0.16.0"

// capabilities: what every release the shim builds against has, plus relayCapabilities
// (relay.go or norelay.go, chosen by the build tag).
var capabilities = append([]string{"openai", "anthropic", "stream", "store", "hooks", "concurrentWaitFor", "register", "resultMetadata"}, relayCapabilities...)

func main() {
	ch := newChannel(os.Stdout)
	ch.serve(os.Stdin, func(ctx context.Context, method string, params json.RawMessage) (any, *rpcError) {
		switch method {
		case "initialize":
			return initialize(params)
		case "toolkit.describe":
			return describe(ctx, params)
		case "client.run":
			return runEntry(ctx, ch, params)
		default:
			return nil, &rpcError{Code: codeNoMethod, Message: "method not found: " + method}
		}
	})
}

func initialize(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.ProtocolVersion != protocolVersion {
		return nil, &rpcError{Code: codeVersion, Message: "this shim speaks protocol 1", Data: map[string]any{"supported": []int{protocolVersion}}}
	}
	return map[string]any{
		"protocolVersion": protocolVersion,
		"port":            "golang",
		"language":        "go",
		"library":         map[string]string{"name": "github.com/muthuishere/toolnexus/golang", "version": portVersion},
		"capabilities":    capabilities,
	}, nil
}

func describe(ctx context.Context, raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Toolkit toolkitSpec `json:"toolkit"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "toolkit.describe: " + err.Error()}
	}
	tk, err := buildToolkit(ctx, p.Toolkit, newRecorder())
	if err != nil {
		return nil, portError("toolkit", err)
	}
	return map[string]any{"openai": tk.ToOpenAI(), "anthropic": tk.ToAnthropic(), "gemini": tk.ToGemini()}, nil
}

func portError(kind string, err error) *rpcError {
	return &rpcError{Code: codePort, Message: err.Error(), Data: map[string]string{"kind": kind}}
}
