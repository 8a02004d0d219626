// Bounding API requests in time. The generated client takes no AbortSignal of its own; a middleware hands
// one to the request it is about to send, so an abort closes the connection rather than leaving it open.

import {
  type ConfigurationOptions,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from "@kubernetes/client-node";
import { type Clock, systemClock } from "./clock.ts";

/** Options for a generated API call that make `signal` abort its request. */
export function abortableBy(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: "append" };
}

/** `promise`, or a rejection with the signal's reason once it aborts, whichever comes first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody waits for `promise` any more: its own failure must not surface as an unhandled rejection.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/**
 * A signal that aborts after `ms` on `clock` with `message` as its reason; `clear` stops the timer once the
 * work is done (a real timer never keeps the process alive either way).
 */
export function deadline(
  ms: number,
  message: string,
  clock: Clock = systemClock,
): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(() => controller.abort(new Error(message)), ms);
  (timer as { unref?: () => void } | null)?.unref?.();
  return { signal: controller.signal, clear: () => clock.clearTimeout(timer) };
}

/**
 * `work`, given `ms` to finish: past that its signal aborts (so its requests are closed rather than left open until
 * the client's own timeout, minutes) and the promise rejects with `message`.
 */
export function withinDeadlineOf<T>(
  ms: number,
  message: string,
  work: (signal: AbortSignal) => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  const limit = deadline(ms, message, clock);
  return untilAborted(work(limit.signal), limit.signal).finally(limit.clear);
}

/** One API request, `send`, given `ms` to answer (see withinDeadlineOf). */
export function withinDeadline<T>(
  ms: number,
  message: string,
  send: (options: ConfigurationOptions) => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  return withinDeadlineOf(ms, message, (signal) => send(abortableBy(signal)), clock);
}
