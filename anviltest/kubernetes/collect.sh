#!/bin/sh
# collect.sh JOB SHARDS [DIR]: copy the artifacts of every shard of the
# Indexed Job JOB out of its pods' logs into DIR/shard-<i>/ (default
# ./anvil-shards), then print the merge command. It fails, naming the
# shard, when a pod is missing or its log carries no artifacts (the pod was
# evicted, or its log rotated away).
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 JOB SHARDS [DIR]" >&2
	exit 2
fi
job=$1
shards=$2
dir=${3:-anvil-shards}
i=0
while [ "$i" -lt "$shards" ]; do
	pod=$(kubectl get pods -l "batch.kubernetes.io/job-name=$job,batch.kubernetes.io/job-completion-index=$i" -o name)
	case $pod in
	'' | *' '*)
		echo "$0: shard $i: want exactly one pod of job $job, got '$pod'" >&2
		exit 1
		;;
	esac
	mkdir -p "$dir/shard-$i"
	kubectl logs "$pod" |
		sed -n "/^--- anvil artifacts of shard $i begin\$/,/^--- anvil artifacts of shard $i end\$/p" |
		sed '1d;$d' | base64 -d | tar -xzf - -C "$dir/shard-$i" || {
		echo "$0: shard $i ($pod): no artifacts in its log" >&2
		exit 1
	}
	i=$((i + 1))
done
echo "anvilreport merge -o merged.json $dir/shard-*/*.json"
