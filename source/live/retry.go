package live

import (
	"context"
	"errors"
	"net/http"
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
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := fn(actx)
		cancel()
		if err == nil || attempt >= attempts || !transient(ctx, err) {
			return err
		}
		wait := backoff
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
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

// transient reports whether a failed request may succeed when repeated: the server
// was overloaded or briefly unavailable, or the request timed out or lost its
// connection. Errors the server means (Forbidden, NotFound, Invalid, a failing
// conversion webhook) are not retried, nor is anything once ctx is done.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
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
