// Command gotemplate-oracle renders template cases with Go's text/template, exactly as
// the Go implementation of OODA procedures does: template.New("fragment").Parse(src)
// then Execute(&buf, params) with params decoded by yaml.v3 into map[string]interface{}.
//
// Input (stdin or -in): a JSON array of {"id", "template", "params"} where params is
// YAML text. Output (stdout or -out): a JSON array of results in the same order:
// {"id", "kind": "ok"|"parse"|"exec"|"yaml", "output", "error", "output_b64"}.
// With -bench N each successfully parsed case is also executed N times and the
// result carries "median_ns" (median wall time of one Execute).
//
// With -config the input is a JSON array of {"id", "config"} where config is a whole
// procedures YAML file; it is decoded by yaml.v3 into the Go implementation's shapes and
// every procedure phase is composed as `ooda show --phase` does (each inline fragment
// rendered when it has parameters, trimmed, joined by a blank line, the whole trimmed). Output:
// {"id", "kind": "ok"|"yaml"|"parse"|"exec", "phases": {"<procedure>/<phase>": text}, "error"}.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

type inCase struct {
	ID       string `json:"id"`
	Template string `json:"template"`
	Params   string `json:"params"`
}

type outCase struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Output    string `json:"output,omitempty"`
	OutputB64 string `json:"output_b64,omitempty"`
	Error     string `json:"error,omitempty"`
	MedianNs  int64  `json:"median_ns,omitempty"`
}

func run(c inCase, bench int) outCase {
	res := outCase{ID: c.ID}
	var params map[string]interface{}
	if err := yaml.Unmarshal([]byte(c.Params), &params); err != nil {
		res.Kind = "yaml"
		res.Error = err.Error()
		return res
	}
	tmpl, err := template.New("fragment").Parse(c.Template)
	if err != nil {
		res.Kind = "parse"
		res.Error = err.Error()
		return res
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, params); err != nil {
		res.Kind = "exec"
		res.Error = err.Error()
		return res
	}
	res.Kind = "ok"
	out := buf.Bytes()
	if utf8.Valid(out) {
		res.Output = string(out)
	} else {
		res.OutputB64 = base64.StdEncoding.EncodeToString(out)
	}
	if bench > 0 {
		times := make([]int64, bench)
		for i := 0; i < bench; i++ {
			var b bytes.Buffer
			start := time.Now()
			tmpl.Execute(&b, params)
			times[i] = time.Since(start).Nanoseconds()
		}
		sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
		res.MedianNs = times[bench/2]
	}
	return res
}

type cfgAction struct {
	Content    string                 `yaml:"content"`
	Parameters map[string]interface{} `yaml:"parameters"`
}

type cfgProcedure struct {
	Observe []cfgAction `yaml:"observe"`
	Orient  []cfgAction `yaml:"orient"`
	Decide  []cfgAction `yaml:"decide"`
	Act     []cfgAction `yaml:"act"`
}

type cfgFile struct {
	Procedures map[string]cfgProcedure `yaml:"procedures"`
}

type configCase struct {
	ID     string `json:"id"`
	Config string `json:"config"`
}

type configResult struct {
	ID     string            `json:"id"`
	Kind   string            `json:"kind"`
	Phases map[string]string `json:"phases,omitempty"`
	Error  string            `json:"error,omitempty"`
}

func composePhase(actions []cfgAction) (string, string, error) {
	parts := make([]string, 0, len(actions))
	for _, a := range actions {
		text := a.Content
		if len(a.Parameters) > 0 {
			tmpl, err := template.New("fragment").Parse(a.Content)
			if err != nil {
				return "", "parse", err
			}
			var buf bytes.Buffer
			if err := tmpl.Execute(&buf, a.Parameters); err != nil {
				return "", "exec", err
			}
			text = buf.String()
		}
		parts = append(parts, strings.TrimSpace(text))
	}
	// The Go implementation trims the joined phase too (AssemblePrompt's TrimSpace), so
	// an empty first or last fragment leaves no blank lines behind.
	return strings.TrimSpace(strings.Join(parts, "\n\n")), "", nil
}

func runConfig(c configCase) configResult {
	res := configResult{ID: c.ID}
	var cfg cfgFile
	if err := yaml.Unmarshal([]byte(c.Config), &cfg); err != nil {
		res.Kind = "yaml"
		res.Error = err.Error()
		return res
	}
	res.Phases = map[string]string{}
	for name, proc := range cfg.Procedures {
		phases := map[string][]cfgAction{
			"observe": proc.Observe, "orient": proc.Orient, "decide": proc.Decide, "act": proc.Act,
		}
		for phase, actions := range phases {
			if len(actions) == 0 {
				continue
			}
			text, kind, err := composePhase(actions)
			if err != nil {
				res.Kind = kind
				res.Error = err.Error()
				res.Phases = nil
				return res
			}
			res.Phases[name+"/"+phase] = text
		}
	}
	res.Kind = "ok"
	return res
}

func main() {
	in := flag.String("in", "-", "input JSON file (- for stdin)")
	out := flag.String("out", "-", "output JSON file (- for stdout)")
	bench := flag.Int("bench", 0, "executions per case for timing (0: none)")
	configMode := flag.Bool("config", false, "input cases are whole config files (see above)")
	flag.Parse()

	var data []byte
	var err error
	if *in == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(*in)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var results interface{}
	if *configMode {
		var cases []configCase
		if err := json.Unmarshal(data, &cases); err != nil {
			fmt.Fprintln(os.Stderr, "bad input:", err)
			os.Exit(2)
		}
		out := make([]configResult, len(cases))
		for i, c := range cases {
			out[i] = runConfig(c)
		}
		results = out
	} else {
		var cases []inCase
		if err := json.Unmarshal(data, &cases); err != nil {
			fmt.Fprintln(os.Stderr, "bad input:", err)
			os.Exit(2)
		}
		out := make([]outCase, len(cases))
		for i, c := range cases {
			out[i] = run(c, *bench)
		}
		results = out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *out == "-" {
		os.Stdout.Write(buf.Bytes())
	} else if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
