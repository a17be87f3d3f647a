package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// writeJSON answers 200 with v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v) // the values written here always marshal
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) serveModels(w http.ResponseWriter, _ *http.Request) {
	ctx := ""
	if !s.cfg.Dialect.OmitModelLen {
		ctx = fmt.Sprintf(`,"max_model_len":%d`, s.cfg.MaxModelLen)
	}
	body := fmt.Sprintf(`{"object":"list","data":[{"id":%q,"object":"model","created":0,"owned_by":"fakeserver","root":%q,"parent":null%s}]}`+"\n",
		s.cfg.Model, s.cfg.Model, ctx)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// serveProps answers llama.cpp's GET /props when Dialect.ServeProps is set:
// {"default_generation_settings": {"n_ctx": MaxModelLen, ...},
// "total_slots": MaxSeqs, ...}.
func (s *Server) serveProps(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Dialect.ServeProps {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": s.cfg.MaxModelLen, "model": s.cfg.Model},
		"total_slots":                 s.cfg.MaxSeqs,
		"model_path":                  s.cfg.Model + ".gguf",
		"build_info":                  "fakeserver",
	})
}

// ollamaArch is the architecture name of the model ollama's endpoints
// describe: POST /api/show reports the context length as
// model_info["fake.context_length"].
const ollamaArch = "fake"

// serveOllamaPS answers ollama's GET /api/ps when Dialect.ServeOllamaPS is
// set: {"models": [{"name", "model", "context_length": MaxModelLen, ...}]}.
func (s *Server) serveOllamaPS(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Dialect.ServeOllamaPS {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, map[string]any{"models": []any{map[string]any{
		"name": s.cfg.Model, "model": s.cfg.Model, "size": 0, "digest": "", "size_vram": 0,
		"details":        map[string]any{"format": "gguf", "family": ollamaArch},
		"context_length": s.cfg.MaxModelLen,
	}}})
}

// serveOllamaShow answers ollama's POST /api/show {"model"} (or {"name"})
// when Dialect.ServeOllamaShow is set: {"model_info":
// {"general.architecture": ollamaArch, "<arch>.context_length":
// MaxModelLen}, ...}; an unknown model gets ollama's 404
// {"error": "model 'X' not found"}.
func (s *Server) serveOllamaShow(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.Dialect.ServeOllamaShow {
		http.NotFound(w, r)
		return
	}
	var q struct{ Model, Name string }
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err == nil {
		err = json.Unmarshal(body, &q)
	}
	model := q.Model
	if model == "" {
		model = q.Name
	}
	if err != nil || model != s.cfg.Model {
		msg, _ := json.Marshal(fmt.Sprintf("model '%s' not found", model))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":` + string(msg) + "}\n"))
		return
	}
	writeJSON(w, map[string]any{
		"modelfile": "", "parameters": "", "template": "",
		"details":      map[string]any{"format": "gguf", "family": ollamaArch},
		"model_info":   map[string]any{"general.architecture": ollamaArch, ollamaArch + ".context_length": s.cfg.MaxModelLen},
		"capabilities": []string{"completion"},
	})
}
