#!/bin/sh
# create-job.sh IMAGE [SHARDS]: create the Indexed Job of job.yaml (in this
# script's folder) running IMAGE as SHARDS shards (default 4), every shard
# starting its measured phase at one instant START_LEAD seconds from
# now (default 60: time for the pods to be scheduled, pull the image and
# warm up). ANVIL_START_AT (RFC 3339, UTC) sets the instant instead.
# PRINT_ONLY=1 prints the manifest instead of creating the Job.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 IMAGE [SHARDS]" >&2
	exit 2
fi
image=$1
shards=${2:-4}
case $shards in
'' | *[!0-9]* | 0*)
	printf "%s: SHARDS must be a whole number >= 1, got '%s'\n" "$0" "$shards" >&2
	exit 2
	;;
esac
case $image in
*'|'* | *' '* | *'&'* | *'\'*)
	printf "%s: IMAGE must not contain a space, '|', '&' or a backslash, got '%s'\n" "$0" "$image" >&2
	exit 2
	;;
esac
if [ -z "${ANVIL_START_AT:-}" ]; then
	at=$(($(date +%s) + ${START_LEAD:-60}))
	# GNU and busybox date take -d @SECONDS, BSD and macOS date -r SECONDS.
	ANVIL_START_AT=$(date -u -d "@$at" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$at" +%Y-%m-%dT%H:%M:%SZ)
fi
manifest=$(sed \
	-e "s|^\( *\)image: .* # anvil:image\$|\1image: $image # anvil:image|" \
	-e "s|^\( *\)completions: .* # anvil:shards\$|\1completions: $shards # anvil:shards|" \
	-e "s|^\( *\)parallelism: .* # anvil:shards\$|\1parallelism: $shards # anvil:shards|" \
	-e "s|^\( *\)value: .* # anvil:shards\$|\1value: \"$shards\" # anvil:shards|" \
	-e "s|^\( *\)value: .* # anvil:start-at\$|\1value: \"$ANVIL_START_AT\" # anvil:start-at|" \
	"$(dirname "$0")/job.yaml")
if [ "${PRINT_ONLY:-}" = 1 ]; then
	printf '%s\n' "$manifest"
	exit 0
fi
printf '%s\n' "$manifest" | kubectl create -f -
echo "$shards shards start at $ANVIL_START_AT; when the Job completes: $(dirname "$0")/collect.sh anvil-bench $shards" >&2
