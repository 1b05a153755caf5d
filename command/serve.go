package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/telemetry"
)

// serve is the default command: the app, with its log as JSON on stderr
// (e-mails and secrets masked; written out every logFlush, warnings and
// errors at once) and, when OTEL_EXPORTER_OTLP_ENDPOINT is set, its traces
// sent over OTLP.
func serve(ctx context.Context, cfg app.Config, stdout, stderr io.Writer) error {
	out := telemetry.NewBufferedLog(stderr, logFlush)
	defer out.Close()
	log := slog.New(telemetry.WithTraceIDs(telemetry.Masking(out.Urgent(slog.LevelWarn, slog.NewJSONHandler(out, nil)))))
	if cfg.Tracing {
		shutdown, err := telemetry.StartTracing(ctx, log)
		if err != nil {
			return fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
		defer func() {
			// What is left goes out before the process ends.
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(flushCtx); err != nil {
				log.Warn("traces: flushing at exit", "err", err)
			}
		}()
		log.Info("traces on: sending them over OTLP/HTTP")
	}

	return app.Serve(ctx, cfg, log, stdout)
}

// logFlush is how long a log line may wait to be written out with others.
const logFlush = 100 * time.Millisecond
