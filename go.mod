module github.com/anvilbench/anvil

go 1.26.0

require (
	github.com/DataDog/sketches-go v1.4.8
	github.com/google/go-cmp v0.7.0
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.73.1
	github.com/stretchr/testify v1.12.1
	github.com/tmaxmax/go-sse v0.12.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pandatix/go-abnf v0.5.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
