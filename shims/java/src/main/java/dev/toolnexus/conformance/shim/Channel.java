package dev.toolnexus.conformance.shim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The JSON-RPC line channel, both directions: the shim's responses to the harness, and the
 * shim's own {@code host.*} requests, whose responses the reader thread hands back by id.
 * Several host requests may be outstanding at once (one per blocked tool thread).
 */
final class Channel {
    /** A {@code host.*} request the harness answered with a JSON-RPC error. */
    static final class HostError extends RuntimeException {
        HostError(String message) {
            super(message);
        }
    }

    private final ObjectMapper json;
    private final OutputStream out;
    private final AtomicLong nextId = new AtomicLong();
    private final Map<String, CompletableFuture<JsonNode>> waiting = new ConcurrentHashMap<>();

    Channel(ObjectMapper json, OutputStream out) {
        this.json = json;
        this.out = out;
    }

    /** Write one message as one compact line; lines from different threads never interleave. */
    void send(Map<String, Object> message) {
        byte[] line;
        try {
            line = (json.writeValueAsString(message) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialize a protocol message: " + e.getMessage(), e);
        }
        synchronized (out) {
            try {
                out.write(line);
                out.flush();
            } catch (IOException e) {
                // stdout is gone: the harness has stopped listening, so there is nobody to tell.
                System.exit(0);
            }
        }
    }

    void respond(Object id, Object result) {
        Map<String, Object> m = envelope(id);
        m.put("result", result);
        send(m);
    }

    void fail(Object id, int code, String message, Object data) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        if (data != null) error.put("data", data);
        Map<String, Object> m = envelope(id);
        m.put("error", error);
        send(m);
    }

    /** Ask the host and block this thread until it answers; an error answer throws {@link HostError}. */
    JsonNode call(String method, Object params) {
        String id = "s-" + nextId.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        waiting.put(id, answer);
        Map<String, Object> m = envelope(id);
        m.put("method", method);
        m.put("params", params);
        send(m);
        try {
            return answer.get();
        } catch (InterruptedException e) {
            waiting.remove(id);
            Thread.currentThread().interrupt();
            throw new HostError(method + " abandoned: the call was cancelled");
        } catch (ExecutionException e) {
            throw new HostError(e.getCause().getMessage());
        }
    }

    /** A response from the host to one of our requests (called on the reader thread). */
    void resolve(JsonNode message) {
        CompletableFuture<JsonNode> answer = waiting.remove(message.path("id").asText());
        if (answer == null) {
            System.err.println("shim: response for unknown id " + message.path("id"));
            return;
        }
        if (message.has("error")) {
            JsonNode error = message.get("error");
            answer.completeExceptionally(new HostError(
                    "host error " + error.path("code").asInt() + ": " + error.path("message").asText()));
        } else {
            answer.complete(message.path("result"));
        }
    }

    private static Map<String, Object> envelope(Object id) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jsonrpc", "2.0");
        m.put("id", id);
        return m;
    }
}
