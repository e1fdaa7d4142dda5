// Command butler-grafana checks a dashboard against Grafana's own dashboard model, for the test of the dashboard
// the monitoring component ships: it reads the dashboard JSON on standard input, decodes it strictly with the
// Grafana Foundation SDK's types (required fields present, no unknown field, every value of its type; panels'
// options and Prometheus queries decoded by their own types) and validates it. It prints "ok", or the problems
// and exits 1.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/gauge"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

func main() {
	runtime := cog.NewRuntime()
	runtime.RegisterDataqueryVariant(prometheus.VariantConfig())
	runtime.RegisterPanelcfgVariant(timeseries.VariantConfig())
	runtime.RegisterPanelcfgVariant(stat.VariantConfig())
	runtime.RegisterPanelcfgVariant(gauge.VariantConfig())
	runtime.RegisterPanelcfgVariant(bargauge.VariantConfig())
	runtime.RegisterPanelcfgVariant(table.VariantConfig())

	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot read standard input:", err)
		os.Exit(2)
	}
	var d dashboard.Dashboard
	failed := false
	for _, err := range []error{d.UnmarshalJSONStrict(raw), d.Validate()} {
		if problem(err) {
			fmt.Println(err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Println("ok")
}

// problem tells an error from the SDK's empty list of errors, which it returns as a non-nil error value.
func problem(err error) bool {
	if errs, ok := err.(cog.BuildErrors); ok {
		return len(errs) > 0
	}
	return err != nil
}
