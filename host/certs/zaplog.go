package certs

import (
	"sort"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger returns a zap logger (what certmagic takes) that writes to
// log. certmagic's Info messages are step-by-step chatter, so they go to
// Debug; Debug goes to Trace.
func newZapLogger(log hclog.Logger) *zap.Logger {
	return zap.New(&hclogCore{log: log})
}

// hclogCore is a zapcore.Core forwarding entries to an hclog.Logger.
type hclogCore struct {
	log    hclog.Logger
	fields []zapcore.Field
}

func level(l zapcore.Level) hclog.Level {
	switch {
	case l < zapcore.InfoLevel:
		return hclog.Trace
	case l == zapcore.InfoLevel:
		return hclog.Debug
	case l == zapcore.WarnLevel:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func (c *hclogCore) Enabled(l zapcore.Level) bool {
	return c.log.GetLevel() <= level(l)
}

func (c *hclogCore) With(fields []zapcore.Field) zapcore.Core {
	all := make([]zapcore.Field, 0, len(c.fields)+len(fields))
	all = append(all, c.fields...)
	all = append(all, fields...)
	return &hclogCore{log: c.log, fields: all}
}

func (c *hclogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *hclogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]any, 0, 2*len(keys)+2)
	if e.LoggerName != "" {
		args = append(args, "certmagic", e.LoggerName)
	}
	for _, k := range keys {
		args = append(args, k, enc.Fields[k])
	}
	c.log.Log(level(e.Level), e.Message, args...)
	return nil
}

func (c *hclogCore) Sync() error { return nil }

var _ zapcore.Core = (*hclogCore)(nil)
