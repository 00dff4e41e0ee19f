package dev.toolnexus.conformance.shim;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The pending events a stream's consumer has received, by Request id, so a waitFor can tell
 * the host whether the link reached the consumer while it waits (SPEC.md §6, host.waitFor
 * {@code pendingEventSeen}; stream.pending-event).
 */
final class Sightings {
    /** How long a stream's waitFor waits for the consumer to receive its pending event. */
    static final long WAIT_MILLIS = 1000;

    private final ConcurrentHashMap<String, CountDownLatch> seen = new ConcurrentHashMap<>();

    private CountDownLatch flag(String id) {
        return seen.computeIfAbsent(id, k -> new CountDownLatch(1));
    }

    void saw(String id) {
        if (id != null) flag(id).countDown();
    }

    boolean waitSeen(String id) {
        try {
            return flag(String.valueOf(id)).await(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
