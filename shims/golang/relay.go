//go:build !norelay

// The port's relay API (ADR 0010: RelayTool, RunWithAnswer, AskWithAnswer), present from
// golang v0.12.0 on. A build against an earlier release uses norelay.go instead (the
// builder sets the `norelay` tag when the checkout has no RelayTool).
package main

import (
	"context"

	tn "github.com/muthuishere/toolnexus/golang"
)

var relayCapabilities = []string{"relay", "resume"}

func relayTool(name, description string, schema tn.JSONSchema) tn.Tool {
	return tn.RelayTool(name, description, schema)
}

func resume(ctx context.Context, client *tn.Client, tk *tn.Toolkit, p runParams, pending tn.Request, answer tn.Answer) (tn.RunResult, error) {
	if p.Entry == "runWithAnswer" {
		return client.RunWithAnswer(ctx, tk, p.History, pending, answer)
	}
	return client.AskWithAnswer(ctx, tk, p.ID, pending, answer)
}
