//go:build norelay

// A release without relay support (before golang v0.12.0): the shim declares neither
// `relay` nor `resume`, so the harness never asks for them; these stand-ins only keep
// the shim compiling and refuse if reached.
package main

import (
	"context"
	"errors"

	tn "github.com/muthuishere/toolnexus/golang"
)

var relayCapabilities = []string{}

var errNoRelay = errors.New("this release of the port has no relay support")

func relayTool(name, description string, schema tn.JSONSchema) tn.Tool {
	return tn.Tool{Name: name, Description: description, InputSchema: schema, Execute: func(map[string]any, *tn.ToolContext) (tn.ToolResult, error) {
		return tn.ToolResult{}, errNoRelay
	}}
}

func resume(context.Context, *tn.Client, *tn.Toolkit, runParams, tn.Request, tn.Answer) (tn.RunResult, error) {
	return tn.RunResult{}, errNoRelay
}
