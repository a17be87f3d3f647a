package fakeserver

import (
	"bufio"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrapeDCGM GETs the fake's DCGM endpoint and parses it with the
// Prometheus text parser.
func scrapeDCGM(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + dcgmPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// TestDCGMIsTheExportersFormat: the fake serves every field of the
// exporter's default counters (testdata/dcgm-exporter), with its type and
// HELP text, each sample labelled as the exporter's renderer labels it.
func TestDCGMIsTheExportersFormat(t *testing.T) {
	cfg := Fast()
	cfg.GPUs = 2
	srv := NewInMemory(cfg)
	defer srv.Close()
	fams := scrapeDCGM(t, srv)

	f, err := os.Open("testdata/dcgm-exporter/default-counters.csv")
	require.NoError(t, err)
	defer f.Close()
	want := map[string][2]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ",", 3)
		require.Len(t, parts, 3, line)
		name, typ, help := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])
		if typ == "label" {
			continue
		}
		want[name] = [2]string{typ, help}
	}
	require.NoError(t, sc.Err())
	require.Len(t, fams, len(want), "every field, nothing else")
	for name, th := range want {
		fam := fams[name]
		require.NotNil(t, fam, name)
		require.Equal(t, th[1], fam.GetHelp(), name)
		require.Equal(t, strings.ToUpper(th[0]), fam.GetType().String(), name)
		require.Len(t, fam.GetMetric(), 2, "one sample per GPU: %s", name)
		for g, m := range fam.GetMetric() {
			var names []string
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
				labels[l.GetName()] = l.GetValue()
			}
			require.ElementsMatch(t, []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "hostname", "DCGM_FI_DRIVER_VERSION"}, names)
			require.Equal(t, []string{"0", "1"}[g], labels["gpu"])
			require.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, labels["UUID"])
			require.Equal(t, defaultGPUModel, labels["modelName"])
		}
	}
	require.NotEqual(t, fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric()[0].GetLabel(), fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric()[1].GetLabel())

	none := NewInMemory(Fast())
	defer none.Close()
	resp, err := none.Client().Get(none.URL + dcgmPath)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no GPUs configured")
}

// gpuValue is the sum over GPUs of a DCGM family's samples.
func gpuValue(fams map[string]*dto.MetricFamily, name string) float64 {
	v := 0.0
	for _, m := range fams[name].GetMetric() {
		if m.Counter != nil {
			v += m.GetCounter().GetValue()
		} else {
			v += m.GetGauge().GetValue()
		}
	}
	return v
}

// TestDCGMEnergyIsExact: the GPUs' energy counters rise by exactly the
// idle power over the time passed plus the configured joules per token
// generated (to the counter's millijoule), and the power between two
// scrapes is that rise over their time.
func TestDCGMEnergyIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Fast()
		cfg.GPUs, cfg.GPUIdleWatts, cfg.GPUJoulesPerToken = 4, 60, 0.5
		srv := NewInMemory(cfg)
		defer srv.Close()
		before := scrapeDCGM(t, srv)
		start := time.Now()
		tokens := drive(t, srv, 4, 5)
		time.Sleep(time.Second)
		after := scrapeDCGM(t, srv)
		secs := time.Since(start).Seconds()
		rise := (gpuValue(after, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") - gpuValue(before, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")) / 1000
		require.Positive(t, tokens)
		require.InDelta(t, 4*60*secs+0.5*float64(tokens), rise, 0.004, "to a millijoule per GPU")
		require.InDelta(t, rise/secs, gpuValue(after, "DCGM_FI_DEV_POWER_USAGE"), 0.01)
		require.Equal(t, 4*60.0, gpuValue(before, "DCGM_FI_DEV_POWER_USAGE"), "idle at the first scrape")
	})
}

// TestSpecDecodeCounters: with a draft of 4 tokens and 3 tokens drawn per
// step, every step accepts 2: the counters give an acceptance rate of
// exactly 0.5 and positions 0 and 1 accepted on every draft.
func TestSpecDecodeCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Fast()
		cfg.SpecTokens, cfg.SpecDraftTokens = Range{3, 3}, 4
		srv := NewInMemory(cfg)
		defer srv.Close()
		drive(t, srv, 2, 3)
		fams := scrape(t, srv)
		drafts := value(t, fams, "vllm:spec_decode_num_drafts_total")
		require.Positive(t, drafts)
		require.Equal(t, 4*drafts, value(t, fams, "vllm:spec_decode_num_draft_tokens_total"))
		require.Equal(t, 2*drafts, value(t, fams, "vllm:spec_decode_num_accepted_tokens_total"))
		perPos := map[string]float64{}
		for _, m := range fams["vllm:spec_decode_num_accepted_tokens_per_pos_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "position" {
					perPos[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		require.Equal(t, map[string]float64{"0": drafts, "1": drafts, "2": 0, "3": 0}, perPos)
		require.Error(t, Config{SpecTokens: Range{1, 7}, SpecDraftTokens: 4}.Validate(), "a step cannot accept more than it drafted")
	})
}
