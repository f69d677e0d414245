# SPDX-License-Identifier: MIT
# serial: benchmark runs timed
# krunner: every micro suite, one round, produces every metric of the issue
# (positive, finite; the retained-memory growths may be 0; --samples values of each sampled metric, with their
# median, interval and MAD) and a result file with artifacts, fingerprints
# and the machine's state.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=syscall-io,process-lifecycle,spawn-scratch --rounds=1 \
	--min-time-ms=20 --samples=4 --out="$PWD/results" >summary.txt || fail "krunner exited $?"
files=(results/*.json)
expect_eq "result files" 1 "${#files[@]}"
result=${files[0]}
case $(basename "$result") in
[0-9]*T[0-9]*Z-syscall-io+process-lifecycle+spawn-scratch.json) echo "ok: name $(basename "$result")" ;;
*) fail "unexpected result file name $result" ;;
esac

declare -A expected=(
	[syscall-io]="pipe_mbps file_write_mbps file_read_mbps syscall_latency_us
		lock_many_files_acquire_us_per_op lock_many_files_conflict_us_per_op
		lock_many_files_replace_us_per_op lock_many_files_unlock_us_per_op
		lock_dense_file_acquire_us_per_op lock_dense_file_conflict_us_per_op
		lock_dense_file_replace_us_per_op lock_dense_file_unlock_us_per_op"
	[process-lifecycle]="hello_start_ms fork_ms exec_ms clone_ms"
	[spawn-scratch]="spawn_ms spawn_large_wire_bytes spawn_large_first_ms
		spawn_large_repeat_ms spawner_peak_rss_bytes spawn_scratch_retained_bytes
		spawn_scratch_kernel_bytes"
)
for suite in "${!expected[@]}"; do
	expect_eq "$suite status" ok "$(jq -r --arg s "$suite" '.suites[] | select(.name == $s) | .status' "$result")"
	want=$(tr -s ' \t\n' '\n' <<<"${expected[$suite]}" | sed '/^$/d' | sort | tr '\n' ' ')
	got=$(jq -r --arg s "$suite" '.suites[] | select(.name == $s) | .metrics | keys[]' "$result" | sort | tr '\n' ' ')
	expect_eq "$suite metrics" "$want" "$got"
	bad=$(jq -r --arg s "$suite" '.suites[] | select(.name == $s) | .metrics | to_entries[]
		| select((.value.samples | length) != .value.n or .value.n < 1
			or .value.ci[0] > .value.median or .value.ci[1] < .value.median
			or (.value.mad | type) != "number" or (.value.median | type) != "number"
			or .value.median < 0 or .value.median >= 1e300 or .value.unit == null
			or (.value.median == 0 and (.key | test("retained|kernel") | not))
			or (.value.direction | IN("higher", "lower") | not)) | .key' "$result")
	[ -z "$bad" ] || fail "$suite: metrics not positive and finite, or without unit/direction: $bad"
	echo "ok: $suite metrics positive and finite"
	arts=$(jq -r --arg s "$suite" '.suites[] | select(.name == $s) | .artifacts
		| map(select(.size > 0 and (.sha256 | test("^[0-9a-f]{64}$")) and (.path | startswith("/"))))
		| length' "$result")
	[ "$arts" -ge 1 ] || fail "$suite: no fingerprinted artifacts"
	echo "ok: $suite has $arts fingerprinted artifacts"
done

# The fingerprint is the file's SHA-256.
path=$(jq -r '.suites[] | select(.name == "syscall-io") | .artifacts[0].path' "$result")
expect_eq "sha256 of $path" "$(sha256sum "$path" | cut -d' ' -f1)" \
	"$(jq -r '.suites[] | select(.name == "syscall-io") | .artifacts[0].sha256' "$result")"
# every value of a sampled metric is kept: 4 per round
for m in pipe_mbps syscall_latency_us lock_dense_file_unlock_us_per_op; do
	expect_eq "$m values" 4 "$(jq --arg m "$m" '.suites[] | select(.name == "syscall-io") | .metrics[$m].samples | length' "$result")"
done
expect_eq "spawn_ms values" 4 "$(jq '.suites[] | select(.name == "spawn-scratch") | .metrics.spawn_ms.n' "$result")"
expect_eq "spawn_large_first_ms values (one per forked child)" 4 \
	"$(jq '.suites[] | select(.name == "spawn-scratch") | .metrics.spawn_large_first_ms.n' "$result")"
jq -e '.machine_state.start.load_average | length == 3' "$result" > /dev/null ||
	fail "no load average in the result: $(jq -c .machine_state "$result")"
jq -e '.machine_state.end.virtualization != null and (.suites[0].settings.options.samples == "4")' \
	"$result" > /dev/null || fail "machine state or settings: $(jq -c '.machine_state, .suites[0].settings' "$result")"
echo "ok: machine state and settings recorded"
expect_eq "wire bytes" 84386 \
	"$(jq '.suites[] | select(.name == "spawn-scratch") | .metrics.spawn_large_wire_bytes.median' "$result")"
for key in start_time end_time host.kernel host.cpu_model host.cores host.memory_bytes tool_versions.krunner; do
	v=$(jq -r ".$key" "$result")
	[ -n "$v" ] && [ "$v" != null ] || fail "result has no $key"
done
echo "ok: host, times and versions recorded"
jq -e '.git == null or ((.git.head | test("^[0-9a-f]{40}$")) and (.git.dirty | type) == "boolean")' \
	"$result" >/dev/null || fail "git is neither null nor {head, dirty}"
grep -q '^  pipe_mbps ' summary.txt || fail "no summary on stdout"
echo "ok: summary printed"
