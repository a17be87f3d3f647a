// Package kubernetes holds the recipe that runs one anvil-go capacity
// workload as the shards of a Kubernetes Indexed Job, one pod per machine,
// and merges their artifacts into one (README.md in this folder): a
// Dockerfile that builds a benchmark package as a test binary, the Job
// manifest (job.yaml), the script that creates the Job with its common
// start instant (create-job.sh) and the one that collects the artifacts
// (collect.sh).
//
// The package has no code. Its test decodes the manifest strictly into the
// Kubernetes API types, unknown fields rejected, so a misspelled field fails
// the build. Nothing imports it, so a benchmark binary never links the
// Kubernetes modules the test needs.
package kubernetes
