/**
 * What ends a response stream: the client going away (the request's signal) or the server starting to
 * shut down. Turn streams are the exception (turns/routes/turns.ts): at shutdown they still send their
 * terminal event, so they follow the request alone.
 */
export function requestOrShutdown(request: Request, shutdown: AbortSignal): AbortSignal {
  return AbortSignal.any([request.signal, shutdown]);
}
