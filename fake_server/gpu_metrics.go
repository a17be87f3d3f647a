package fakeserver

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// The fake's GET /dcgm-exporter/metrics is what NVIDIA's DCGM exporter
// (github.com/NVIDIA/dcgm-exporter) serves for Config.GPUs GPUs: every
// field of the exporter's etc/default-counters.csv, in its order, with
// its HELP text and type, each sample labelled as the exporter's renderer
// labels it (gpu, UUID, pci_bus_id, device, modelName, hostname, then the
// DCGM_FI_DRIVER_VERSION attribute), values as the exporter writes them
// (floats with six decimals, integers bare). The GPUs are simulated
// beside the engine:
//
//	DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION  mJ since the server started, from a per-GPU boot value:
//	                                      GPUIdleWatts x seconds + GPUJoulesPerToken/GPUs x tokens generated
//	DCGM_FI_DEV_POWER_USAGE               W: the energy counter's rise since the previous scrape over its
//	                                      time (GPUIdleWatts at the first)
//	DCGM_FI_DEV_GPU_UTIL                  100 while the engine runs a sequence, else 0
//	DCGM_FI_PROF_GR_ENGINE_ACTIVE         running sequences / MaxSeqs (the tensor pipe half of it)
//	DCGM_FI_PROF_DRAM_ACTIVE              the KV cache's used share
//	DCGM_FI_DEV_FB_USED, _FB_FREE         weights plus the KV cache's share of the framebuffer
//
// and the other fields are constants of an idle healthy GPU.

// dcgmPath is where the fake serves its GPUs' DCGM metrics.
const dcgmPath = "/dcgm-exporter/metrics"

// maxGPUs bounds Config.GPUs.
const maxGPUs = 64

// Constants of the simulated GPUs.
const (
	defaultGPUModel   = "NVIDIA H100 80GB HBM3"
	gpuHostname       = "anvil-fake"
	gpuDriverVersion  = "570.124.06"
	gpuFramebufferMiB = 81559 // an H100 80GB's
	gpuWeightsMiB     = 30000 // the model's share of it
	gpuKVMiB          = 40000 // the KV cache's, filled by kv_cache_usage
	gpuReservedMiB    = 573
	gpuBootEnergyMJ   = 31035686671 // the first GPU's counter at the server's start
)

// dcgmField is one field of the exporter's default counters: its name,
// Prometheus type and HELP text, as etc/default-counters.csv has them.
type dcgmField struct{ name, typ, help string }

// dcgmFields are the exporter's default counters, in its order (the label
// field DCGM_FI_DRIVER_VERSION is an attribute of every sample instead).
var dcgmFields = []dcgmField{
	{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
	{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
	{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
	{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
	{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."},
	{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."},
	{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
	{"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."},
	{"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."},
	{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
	{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
	{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
	{"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."},
	{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."},
	{"DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"},
	{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"},
	{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"},
	{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"},
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
	{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."},
	{"DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data."},
	{"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second."},
	{"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second."},
}

// gpuScrape is the last scrape's energy, for the power reading of the
// next: each GPU's counter in mJ, and when.
type gpuScrape struct {
	at     time.Time
	energy []float64
}

// gpuEnergyMJ is GPU g's energy counter in mJ at t, with gen tokens
// generated so far.
func (s *Server) gpuEnergyMJ(g int, t time.Time, gen int64) float64 {
	c := &s.cfg
	joules := c.GPUIdleWatts*t.Sub(s.engine.stats.created).Seconds() + c.GPUJoulesPerToken/float64(c.GPUs)*float64(gen)
	return float64(gpuBootEnergyMJ+int64(g)*1_000_000_007) + joules*1000
}

// serveDCGM answers GET /dcgm-exporter/metrics: the exporter's text for
// the simulated GPUs, or a 404 without Config.GPUs.
func (s *Server) serveDCGM(w http.ResponseWriter, r *http.Request) {
	c := &s.cfg
	if c.GPUs <= 0 {
		http.NotFound(w, r)
		return
	}
	st := s.engine.stats
	st.mu.Lock()
	running, kvTokens, gen := st.running, st.kvTokens, st.gen
	st.mu.Unlock()
	now := time.Now()
	energy := make([]float64, c.GPUs)
	power := make([]float64, c.GPUs)
	s.gpuMu.Lock()
	prev := s.gpuLast
	for g := range energy {
		energy[g] = s.gpuEnergyMJ(g, now, gen)
		power[g] = c.GPUIdleWatts
		if dt := now.Sub(prev.at).Seconds(); len(prev.energy) == c.GPUs && dt > 0 {
			power[g] = (energy[g] - prev.energy[g]) / 1000 / dt
		}
	}
	s.gpuLast = gpuScrape{at: now, energy: energy}
	s.gpuMu.Unlock()

	busy := running > 0
	active := math.Min(1, float64(running)/float64(c.MaxSeqs))
	kv := 0.0
	if t := c.KVCacheTokens(); t > 0 {
		kv = math.Min(1, float64(kvTokens)/float64(t))
	}
	used := gpuWeightsMiB + int(kv*gpuKVMiB)
	values := func(field string, g int) string {
		switch field {
		case "DCGM_FI_DEV_SM_CLOCK":
			return dcgmInt(map[bool]int64{true: 1980, false: 345}[busy])
		case "DCGM_FI_DEV_MEM_CLOCK":
			return dcgmInt(2619)
		case "DCGM_FI_DEV_MEMORY_TEMP":
			return dcgmInt(map[bool]int64{true: 48, false: 36}[busy])
		case "DCGM_FI_DEV_GPU_TEMP":
			return dcgmInt(map[bool]int64{true: 61, false: 33}[busy])
		case "DCGM_FI_DEV_POWER_USAGE":
			return dcgmFloat(power[g])
		case "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION":
			return dcgmInt(int64(math.Floor(energy[g])))
		case "DCGM_FI_DEV_GPU_UTIL":
			return dcgmInt(map[bool]int64{true: 100, false: 0}[busy])
		case "DCGM_FI_DEV_MEM_COPY_UTIL":
			return dcgmInt(int64(math.Round(kv * 40)))
		case "DCGM_FI_DEV_FB_FREE":
			return dcgmInt(int64(gpuFramebufferMiB - gpuReservedMiB - used))
		case "DCGM_FI_DEV_FB_USED":
			return dcgmInt(int64(used))
		case "DCGM_FI_DEV_FB_RESERVED":
			return dcgmInt(gpuReservedMiB)
		case "DCGM_FI_PROF_GR_ENGINE_ACTIVE":
			return dcgmFloat(active)
		case "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
			return dcgmFloat(active / 2)
		case "DCGM_FI_PROF_DRAM_ACTIVE":
			return dcgmFloat(kv)
		case "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES":
			return dcgmInt(map[bool]int64{true: 52_000_000, false: 480_000}[busy])
		}
		return dcgmInt(0)
	}
	model := c.GPUModelName
	if model == "" {
		model = defaultGPUModel
	}
	var b strings.Builder
	for _, f := range dcgmFields {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for g := range c.GPUs {
			fmt.Fprintf(&b, `%s{gpu="%d",UUID="%s",pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName="%s",hostname="%s",DCGM_FI_DRIVER_VERSION="%s"} %s`+"\n",
				f.name, g, gpuUUID(c.Seed, g), 0x18+g, g, escapeLabel(model), gpuHostname, gpuDriverVersion, values(f.name, g))
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// gpuUUID is GPU g's UUID, fixed by the seed: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func gpuUUID(seed uint64, g int) string {
	x := splitmix(seed ^ uint64(g+1)*0x9e3779b97f4a7c15)
	y := splitmix(x)
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(x>>32), uint16(x>>16), uint16(x), uint16(y>>48), y&0xffffffffffff)
}

// splitmix is one step of SplitMix64.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// dcgmFloat writes a float as the exporter does (fmt's %f).
func dcgmFloat(v float64) string { return fmt.Sprintf("%f", v) }

// dcgmInt writes an integer field as the exporter does.
func dcgmInt(v int64) string { return fmt.Sprintf("%d", v) }
