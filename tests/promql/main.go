// Command butler-promql parses PromQL expressions with Prometheus's own parser, for the test that checks the
// shipped PrometheusRule. It reads a JSON array of expressions on standard input and writes, for each, either
// the parse error or the metric names its selectors use.
package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/prometheus/prometheus/promql/parser"
)

type result struct {
	Error   string   `json:"error,omitempty"`
	Metrics []string `json:"metrics"`
}

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		os.Stderr.WriteString("expected a JSON array of strings on stdin: " + err.Error() + "\n")
		os.Exit(2)
	}
	out := make([]result, 0, len(exprs))
	for _, e := range exprs {
		expr, err := parser.ParseExpr(e)
		if err != nil {
			out = append(out, result{Error: err.Error(), Metrics: []string{}})
			continue
		}
		seen := map[string]bool{}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok && vs.Name != "" {
				seen[vs.Name] = true
			}
			return nil
		})
		metrics := make([]string, 0, len(seen))
		for m := range seen {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		out = append(out, result{Metrics: metrics})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
