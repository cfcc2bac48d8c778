package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// retry calls fn until it succeeds, fails for good, or has been tried attempts
// times, waiting between attempts with exponential backoff (or as long as the
// server asks with Retry-After). Each attempt gets its own deadline, so one hung
// request costs a timeout, not the whole load.
func retry(ctx context.Context, timeout time.Duration, fn func(ctx context.Context) error) error {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(context.WithValue(ctx, timeoutKey{}, timeout), timeout)
		err := fn(actx)
		cancel()
		if err == nil || attempt >= attempts || !transient(ctx, err) {
			return err
		}
		wait := backoff
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
			if wait > timeout {
				return &waitError{code: statusCode(err), wait: wait, timeout: timeout}
			}
		}
		wait = min(wait, maxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff *= 2
	}
}

// waitError is a server that asks to be asked again later than the request timeout
// allows: the read gives up on it at once rather than waiting past its deadline.
type waitError struct {
	code    int
	wait    time.Duration
	timeout time.Duration
}

func (e *waitError) Error() string {
	return fmt.Sprintf("the API server answered HTTP %d %s and asked to wait %s before asking again (Retry-After), longer than the request timeout of %s (--request-timeout)",
		e.code, http.StatusText(e.code), e.wait, e.timeout)
}

func statusCode(err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return int(status.Status().Code)
	}
	return http.StatusTooManyRequests
}

// retryAfterGuard answers for the client when the server asks, with Retry-After, to
// wait past the request's deadline: client-go would otherwise sleep as asked and
// then fail with an error about its own rate limiter.
type retryAfterGuard struct{ rt http.RoundTripper }

func (g retryAfterGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.rt.RoundTrip(req)
	if err != nil || resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500) {
		return resp, err
	}
	secs, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if perr != nil || secs <= 0 {
		return resp, err
	}
	wait := time.Duration(secs) * time.Second
	deadline, ok := req.Context().Deadline()
	if !ok || time.Until(deadline) >= wait {
		return resp, err
	}
	resp.Body.Close()
	timeout := time.Until(deadline).Round(time.Second)
	if t, ok := req.Context().Value(timeoutKey{}).(time.Duration); ok {
		timeout = t
	}
	return nil, &waitError{code: resp.StatusCode, wait: wait, timeout: timeout}
}

// timeoutKey carries the request timeout, for the words of a waitError.
type timeoutKey struct{}

// transient reports whether a failed request may succeed when repeated: the server
// was overloaded or briefly unavailable, or the request timed out or lost its
// connection. Errors the server means (Forbidden, NotFound, Invalid, a failing
// conversion webhook) are not retried, nor is anything once ctx is done.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var we *waitError
	if errors.As(err, &we) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		switch {
		case code == http.StatusTooManyRequests:
			return true
		case code == http.StatusNotImplemented || code == http.StatusHTTPVersionNotSupported:
			return false
		case code >= 500:
			// The API server answers a failed CRD conversion with a 500; it will
			// fail the same way until the webhook's controller is back.
			return !strings.Contains(status.Status().Message, "conversion webhook")
		}
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true // this attempt's own deadline; ctx itself is still live
	}
	return utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsTimeout(err)
}
