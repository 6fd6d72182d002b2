# Command-line cases: dr_cli_test(name code regex args...) runs `bash expect.sh CODE REGEX dreduce args...`
# (tests/cli/expect.sh): exit code CODE and output matching REGEX (grep -E). For CODE 2, expect.sh also requires
# exactly one line on stderr starting with "dreduce: error:".
#
# dr_cli_check(name [OPTS expect.sh-options...] CODE code REGEX regex [ARGS dreduce-args...]) is the same with
# expect.sh's extra checks (--also, --not, --json, --json-expr, --env, --csv-append, --file).
# Regexes avoid backslashes and semicolons (CMake list separators): use [.] [(] etc.

function(dr_cli_check name)
  cmake_parse_arguments(PARSE_ARGV 1 C "" "CODE;REGEX" "OPTS;ARGS")
  add_test(NAME cli_${name}
           COMMAND bash ${DR_EXPECT} ${C_OPTS} ${C_CODE} ${C_REGEX} $<TARGET_FILE:dreduce> ${C_ARGS})
  set_tests_properties(cli_${name} PROPERTIES LABELS cli TIMEOUT 120 ENVIRONMENT "${DR_TEST_ENV}")
endfunction()

set(DR_CLI_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli-out)
file(MAKE_DIRECTORY ${DR_CLI_OUT})

# ---- help and version ----
dr_cli_check(help CODE 0 REGEX "^usage: dreduce"
             OPTS --also "--count" --also "--type" --also "--op" --also "--acc" --also "--data" --also "--kernel"
                  --also "--block" --also "--device" --also "--iters" --also "--misalign" --also "--scaling"
                  --also "--combine" --also "--format" --also "--output" --also "--version" --also "Exit status"
             ARGS --help)
dr_cli_test(help_short 0 "^usage: dreduce" -h)
dr_cli_test(help_after_options 0 "^usage: dreduce" -n 5 --type int32 --help)
dr_cli_check(version CODE 0 REGEX "^dreduce [0-9]+[.][0-9]+[.][0-9]+$" OPTS --not "usage" ARGS --version)

# ---- bad usage: exit 2, one line "dreduce: error: ..." naming the bad value ----
dr_cli_test(unknown_option 2 "^dreduce: error: .*'--frobnicate'" --frobnicate)
dr_cli_test(unknown_option_value 2 "^dreduce: error: .*'--frobnicate'" --frobnicate=3)
dr_cli_test(unknown_short 2 "^dreduce: error: .*'-x'" -x)
dr_cli_test(stray_argument 2 "^dreduce: error: .*'stray'" -n 5 stray)
dr_cli_test(missing_value 2 "^dreduce: error: .*--type.*needs a value" --type)
dr_cli_test(missing_value_short 2 "^dreduce: error: .*--count.*needs a value" --device cpu -n)
dr_cli_test(no_value_allowed 2 "^dreduce: error: .*--allreduce.*takes no value" --allreduce=1)
dr_cli_test(count_negative 2 "^dreduce: error: .*count '-5'" -n -5)
dr_cli_test(count_garbage 2 "^dreduce: error: .*count 'abc'" -n abc)
dr_cli_test(count_overflow 2 "^dreduce: error: .*'99999999999999999999'.*2.64" -n 99999999999999999999)
dr_cli_test(count_overflow_suffix 2 "^dreduce: error: .*'17179869184Gi'" --count=17179869184Gi)
dr_cli_test(count_bad_suffix 2 "^dreduce: error: .*'5MiB'.*Ki Mi Gi Ti" -n 5MiB)
dr_cli_test(count_fraction 2 "^dreduce: error: .*'1[.]5M'" -n 1.5M)
dr_cli_test(bad_type 2 "^dreduce: error: .*'float128'.*int32.*bfloat16" --type float128)
dr_cli_test(bad_op 2 "^dreduce: error: .*'mean'.*sum.*bxor" --op mean)
dr_cli_test(bad_kernel 2 "^dreduce: error: .*'warp'.*neighbored.*multipass" -k warp)
dr_cli_test(bad_acc 2 "^dreduce: error: .*'double'.*wide.*native.*exact" --acc double)
dr_cli_test(acc_exact_prod 2 "^dreduce: error: --acc exact cannot be used with --op prod of --type float64" --acc exact
            --op prod --type float64)
dr_cli_test(acc_exact_kernel 2 "^dreduce: error: --acc exact cannot be used with --kernel smem" --acc exact -k smem)
dr_cli_test(bad_data 2 "^dreduce: error: .*'zeros'.*random.*const" --data zeros)
dr_cli_test(bad_nan 2 "^dreduce: error: invalid --nan 'skip': allowed: propagate, omit" --nan skip)
dr_cli_test(bad_nans 2 "^dreduce: error: invalid --nans '1[.]5': expected a fraction in 0[.][.]1" --nans 1.5)
dr_cli_test(bad_nans_text 2 "^dreduce: error: invalid --nans '1%': expected a fraction in 0[.][.]1" --nans 1%)
dr_cli_test(nans_int 2 "^dreduce: error: --nans 0[.]01 cannot be used with --type int32 [(]an integer type has no NaN[)]"
            --nans 0.01 --type int32)
dr_cli_test(nan_omit_level 2 "^dreduce: error: --nan omit cannot be used with --kernel smem" --nan omit --kernel smem)
# --nan omit end to end on the CPU backend (the GPU's: tests/gpu/test_nan.c), checked by the program's reference
dr_cli_test(nan_omit_stats 0 "NaN omitted [(]--nan omit, as NumPy's nan[*] functions[)]: 9[0-9][0-9] of 100003"
            --device cpu --nan omit --nans 0.01 --op stats --type float16 -n 100003 --iters 1)
dr_cli_test(nan_omit_argmin_all 0 "argmin of 1000 NaN [(]omitted[)]: no value, as np.nanargmin raises"
            --device cpu --nan omit --nans 1 --op argmin -n 1000 --iters 1)
dr_cli_test(nan_omit_exact 0 "verification: passed: exact sum, rounded once"
            --device cpu --nan omit --nans 0.3 --acc exact --type bfloat16 -n 100003 --iters 1)
dr_cli_test(nan_propagate_sum 0 "^result: nan [(]float64[)]" --device cpu --nans 0.01 -n 1000 --iters 1)
# --memory and --host-path (issue 43; each path on a GPU: tests/gpu/test_host_path.c)
dr_cli_test(bad_memory 2 "^dreduce: error: invalid --memory 'host': allowed: auto, gpu, pinned, pageable" --memory host)
dr_cli_test(bad_host_path 2 "^dreduce: error: invalid --host-path 'both': allowed: auto, cpu, gpu, split"
            --host-path both)
dr_cli_test(host_path_needs_memory 2 "^dreduce: error: --host-path split needs --memory pinned or pageable"
            --host-path split)
dr_cli_test(host_path_cpu_device 2 "^dreduce: error: --host-path gpu cannot be used with --device cpu"
            --device cpu --host-path gpu --memory pageable)
dr_cli_test(memory_pinned_cpu_device 2 "^dreduce: error: --memory pinned cannot be used with --device cpu"
            --device cpu --memory pinned)
dr_cli_test(memory_input 2 "^dreduce: error: --memory cannot be used with --input" --memory pageable --input x.npy)
dr_cli_test(host_path_dist 2 "^dreduce: error: --host-path cannot be used with --op median"
            --host-path cpu --memory pageable --op median)
# Without a GPU (hidden here, so the case holds on GPU machines too): a GPU path asked of the CPU backend is refused
# at setup
dr_cli_check(host_path_no_gpu CODE 2 REGEX "^dreduce: error: .*host-path is split: it needs a GPU"
             OPTS --env CUDA_VISIBLE_DEVICES=-1 ARGS --host-path split --memory pageable -n 1000 --iters 1)
dr_cli_check(host_memory_pageable_cpu CODE 0 REGEX "\"pass\": true"
             OPTS --json-expr "d['schema_version'] == 6 and d['config']['memory'] == 'pageable' and d['config']['host_path'] == 'cpu' and d['ranks'][0]['host_array'] is None"
             ARGS --device cpu --memory pageable --host-path cpu -n 100003 --iters 1 --format json)
dr_cli_test(bad_block_not_pow2 2 "^dreduce: error: .*--block '48'.*32, 64, 128, 256, 512, 1024" --block 48)
dr_cli_test(bad_block_too_big 2 "^dreduce: error: .*--block '2048'.*1024" -b 2048)
dr_cli_test(bad_block_too_small 2 "^dreduce: error: .*--block '16'.*32" --block=16)
dr_cli_test(bad_block_zero 2 "^dreduce: error: .*--block '0'" --block 0)
dr_cli_test(bad_block_garbage 2 "^dreduce: error: .*--block 'abc'" --block abc)
dr_cli_test(bitwise_float 2 "^dreduce: error: .*bxor.*float64" --op bxor --type float64)
dr_cli_test(bitwise_default_type 2 "^dreduce: error: .*band.*float32" --op band)
dr_cli_test(bad_format 2 "^dreduce: error: .*'xml'.*table.*json.*csv" --format xml)
dr_cli_test(bad_device 2 "^dreduce: error: .*'tpu'.*auto.*gpu.*cpu" --device tpu)
dr_cli_test(bad_scaling 2 "^dreduce: error: .*'medium'.*strong.*weak" --scaling medium)
dr_cli_test(bad_combine 2 "^dreduce: error: .*'tree'.*hier.*flat" --combine tree)
dr_cli_test(bad_staging 2 "^dreduce: error: .*'gpu'.*device.*host" --staging gpu)
dr_cli_test(bad_verify 2 "^dreduce: error: .*'maybe'.*on" --verify maybe)
dr_cli_test(iters_zero 2 "^dreduce: error: .*--iters '0'" --iters 0)
dr_cli_test(misalign_16 2 "^dreduce: error: .*--misalign '16'.*0[.][.]15" --misalign 16)
dr_cli_test(const_int32_range 2 "^dreduce: error: .*'2147483648'.*int32" --type int32 --data const:2147483648)
dr_cli_test(const_uint32_negative 2 "^dreduce: error: .*'-1'.*uint32" --type uint32 --data const:-1)
dr_cli_test(const_float16_range 2 "^dreduce: error: .*'70000'.*float16" --type float16 --data const:70000)
dr_cli_test(const_garbage 2 "^dreduce: error: .*'1[.]5x'" --type float32 --data const:1.5x)
# A machine without a GPU (hidden here, so the case holds on GPU machines too).
dr_cli_check(device_gpu_without_gpu CODE 2 REGEX "^dreduce: error: .*no GPU"
             OPTS --env CUDA_VISIBLE_DEVICES=-1 ARGS --device gpu -n 1000 --iters 1)
dr_cli_check(output_unwritable CODE 2 REGEX "^dreduce: error: .*'/nonexistent-dir/x[.]json'"
             ARGS --device cpu -n 1000 --iters 1 --format json --output /nonexistent-dir/x.json)

# ---- runs on the CPU backend (a singleton MPI process) ----
dr_cli_check(cpu_small CODE 0 REGEX "verification: passed" OPTS --also "^result: " --also "backend: cpu"
             ARGS --device cpu -n 1000 --iters 2)
dr_cli_check(json CODE 0 REGEX "\"schema\": \"dreduce-report\""
             OPTS --json-expr "d['verification']['pass'] is True"
                  --json-expr "d['config']['n'] == 1000 and d['config']['type'] == 'float32'"
                  --json-expr "len(d['ranks']) == 1 and d['ranks'][0]['count'] == 1000"
             ARGS --device cpu -n 1000 --iters 2 --format json)
dr_cli_check(json_nan CODE 0 REGEX "\"value\": \"nan\""
             OPTS --json-expr "d['result']['value'] == 'nan' and d['verification']['pass'] is True"
             ARGS --device cpu -n 1000 --iters 1 --format json --op min --data const:nan)
dr_cli_check(json_output_file CODE 0 REGEX "\"result\": [{]\"value\": \"7000\""
             OPTS --file ${DR_CLI_OUT}/report.json --json-expr "d['result']['value'] == '7000'"
             ARGS --device cpu -n 1000 --iters 1 --format json --type int32 --data const:7 -o ${DR_CLI_OUT}/report.json)
dr_cli_check(csv_append CODE 0 REGEX "^6,0,.*,total,.*,int64,.*,pass,,,,,,,,,,,,,,,,,,,,,,,,,propagate,0,auto,auto$"
             OPTS --csv-append ${DR_CLI_OUT}/append.csv
             ARGS --device cpu -n 1000 --iters 2 --type int32 --format csv -o ${DR_CLI_OUT}/append.csv)
dr_cli_test(const_int32_sum 0 "^result: 7000 [(]int64[)]" --type int32 --data const:7 -n 1000 --device cpu --iters 1)
dr_cli_test(iota_int64_sum 0 "^result: 499500 [(]int64[)]" --type int64 --data iota -n 1000 --device cpu --iters 1)
# spread: every float type's exact sum and native sum pass the reference, and the report names the data.
foreach(type float16 bfloat16 float32 float64)
  foreach(acc exact native)
    dr_cli_check(spread_${type}_${acc} CODE 0 REGEX "\"data\": \"spread\""
                 OPTS --json-expr "d['verification']['pass'] is True and d['config']['acc'] == '${acc}'"
                 ARGS --device cpu -n 100003 --iters 1 --format json --type ${type} --acc ${acc} --data spread)
  endforeach()
endforeach()
dr_cli_test(iota_uint64_bxor 0 "^result: 1023 [(]uint64[)]" --type uint64 --op bxor --data iota -n 1023 --device cpu)
dr_cli_test(ones_float16_sum 0 "^result: 1000 [(]float64[)]" --type float16 --data ones -n 1000 --device cpu)
dr_cli_test(ones_bfloat16_native 0 "^result: 256 [(]float32[)]" --type bfloat16 --acc native --data ones -n 256 --device cpu)
dr_cli_test(const_float32_exact 0 "^result: 1[.]0000000149011612 [(]float64[)]" --type float32 --data const:0.1 -n 10
            --acc exact --device cpu --iters 1)
dr_cli_test(negzero_float64_exact 0 "^result: -0 [(]float64[)]" --type float64 --data const:-0.0 -n 1001 --acc exact
            --device cpu --iters 1)
dr_cli_test(const_int32_min 0 "^result: -5 [(]int32[)]" --type int32 --op min --data const:-5 -n 777 --device cpu)
dr_cli_check(misalign CODE 0 REGEX "verification: passed"
             ARGS --device cpu -n 1000 --misalign 3 --iters 2)
dr_cli_check(misalign_15_float16 CODE 0 REGEX "verification: passed"
             ARGS --device cpu -n 70001 --misalign 15 --type float16 --iters 2)
dr_cli_check(empty_array CODE 0 REGEX "^result: 0 [(]float64[)]" OPTS --also "verification: passed"
             ARGS --device cpu -n 0 --iters 1)
dr_cli_check(weak_single_rank CODE 0 REGEX "verification: passed" OPTS --also "weak"
             ARGS --device cpu -n 1000 --scaling weak --iters 1)
dr_cli_check(verify_off CODE 0 REGEX "^result: " OPTS --not "verification: (passed|FAILED)"
             ARGS --device cpu -n 1000 --verify off --iters 1)

# --timeout: seconds, 0 = never; anything else is one clear line.
dr_cli_test(timeout_negative 2 "^dreduce: error: invalid --timeout '-1': expected seconds" --timeout -1)
dr_cli_test(timeout_garbage 2 "^dreduce: error: invalid --timeout 'soon'" --timeout soon)
dr_cli_test(timeout_zero_runs 0 "verification: passed" --device cpu -n 1000 --iters 2 --timeout 0)

# ---- the rest of the bad-input table (docs/reliability.md, "Bad input"): every numeric option negative, zero where
# not allowed, garbage, past its range; every enum; what needs the whole command line ----
dr_cli_test(count_empty 2 "^dreduce: error: invalid count '': expected a non-negative integer" --count=)
dr_cli_test(count_plus 2 "^dreduce: error: invalid count '[+]5': expected a non-negative integer" -n +5)
dr_cli_test(count_exponent 2 "^dreduce: error: invalid count '1e6': unknown suffix 'e6' [(]allowed: K M G T, Ki Mi Gi Ti[)]" -n 1e6)
dr_cli_test(count_address_space 2
            "^dreduce: error: 4611686018427387904 elements of 8 bytes do not fit in this process's address space"
            -n 4611686018427387904 --type float64 --device cpu --iters 1)
dr_cli_test(iters_garbage 2 "^dreduce: error: invalid --iters 'abc': expected an integer in 1[.][.]1000000" --iters abc)
dr_cli_test(iters_overflow 2 "^dreduce: error: invalid --iters '99999999999': expected an integer in 1[.][.]1000000"
            --iters 99999999999)
dr_cli_test(warmup_negative 2 "^dreduce: error: invalid --warmup '-1': expected an integer in 0[.][.]1000000" --warmup -1)
dr_cli_test(threads_negative 2 "^dreduce: error: invalid --threads '-1': expected an integer in 0[.][.]4096" --threads -1)
dr_cli_test(threads_too_many 2 "^dreduce: error: invalid --threads '4097': expected an integer in 0[.][.]4096" --threads 4097)
dr_cli_test(seed_negative 2 "^dreduce: error: invalid --seed '-1': expected an integer in 0[.][.]2.64-1" --seed -1)
dr_cli_test(seed_overflow 2 "^dreduce: error: invalid --seed '18446744073709551616': expected an integer in 0[.][.]2.64-1"
            --seed 18446744073709551616)
dr_cli_test(seed_garbage 2 "^dreduce: error: invalid --seed 'abc'" --seed abc)
dr_cli_test(misalign_negative 2 "^dreduce: error: invalid --misalign '-1': expected an integer in 0[.][.]15" --misalign -1)
dr_cli_test(ranks_per_node_zero 2 "^dreduce: error: invalid --ranks-per-node '0': expected an integer in 1[.][.]1048576"
            --ranks-per-node 0)
dr_cli_test(ranks_per_node_overflow 2 "^dreduce: error: invalid --ranks-per-node '99999999999'" --ranks-per-node 99999999999)
dr_cli_test(timeout_too_large 2 "^dreduce: error: invalid --timeout '1e7': expected seconds in 0[.][.]1000000" --timeout 1e7)
dr_cli_test(bad_bind 2 "^dreduce: error: invalid --bind 'far': allowed: auto, none, workers" --bind far)
dr_cli_test(bad_type_case 2 "^dreduce: error: invalid --type 'INT32': allowed: int32, int64" --type INT32)
dr_cli_test(bad_type_empty 2 "^dreduce: error: invalid --type '': allowed: int32" --type=)
dr_cli_test(bad_block_negative 2 "^dreduce: error: invalid --block '-32': allowed: 32, 64, 128, 256, 512, 1024" --block -32)
dr_cli_test(bitwise_bfloat16 2 "^dreduce: error: --op bor is not defined for --type bfloat16 [(]band, bor, bxor take the integer types[)]"
            --op bor --type bfloat16)
dr_cli_test(const_empty 2 "^dreduce: error: invalid constant '': expected a number [(]or nan, inf[)] for --type float32" --data const:)
dr_cli_test(const_nan_int32 2 "^dreduce: error: invalid constant 'nan': --type int32 holds -2147483648[.][.]2147483647"
            --type int32 --data const:nan)
dr_cli_test(const_float64_range 2 "^dreduce: error: invalid constant '1e400': out of range for --type float64"
            --type float64 --data const:1e400)
dr_cli_test(missing_value_next_option 2 "^dreduce: error: invalid --type '--op': allowed: int32" --type --op sum)
dr_cli_test(missing_value_last 2 "^dreduce: error: option '--verify' needs a value" --device cpu --verify)
dr_cli_test(no_value_allowed_share_gpus 2 "^dreduce: error: option '--share-gpus' takes no value" --share-gpus=yes)
dr_cli_test(unknown_single_dash_long 2
            "^dreduce: error: unknown option '-count': long options take two dashes [(]--count[)]$" -count 5)
dr_cli_test(output_empty 2 "^dreduce: error: invalid --output '': expected a file name" --output=)
dr_cli_check(output_directory CODE 2 REGEX "^dreduce: error: cannot write --output '.*cli-out': Is a directory"
             ARGS --device cpu -n 1000 --iters 1 -o ${DR_CLI_OUT})
# --staging chooses how a GPU partial reaches MPI: with --device cpu it could have no effect, so it is an error.
dr_cli_test(staging_device_cpu_backend 2
            "^dreduce: error: --staging device cannot be used with --device cpu [(]staging is how a GPU's partial"
            --device cpu --staging device -n 1000 --iters 1)
dr_cli_test(dataset_without_input 2 "^dreduce: error: --dataset needs --input [(]it names the dataset of an HDF5 input file[)]" --dataset /x)

# ---- stats, argmin, argmax (issue #37) ----
# No native mode (whatever the type, and for an --input of unknown type), no teaching kernel: one line, exit 2.
dr_cli_test(argmax_native 2 "^dreduce: error: --acc native cannot be used with --op argmax [(].*[)]: use --acc wide"
            --op argmax --acc native --device cpu -n 10)
dr_cli_test(argmin_native_int8 2 "^dreduce: error: --acc native cannot be used with --op argmin" --op argmin
            --acc native --type int8)
dr_cli_test(stats_native 2 "^dreduce: error: --acc native cannot be used with --op stats [(].*[)]: use --acc wide [(]the default[)] or exact"
            --op stats --acc native --type float16)
dr_cli_test(stats_native_input 2 "^dreduce: error: --acc native cannot be used with --op stats" --op stats --acc native
            --input /nonexistent.npy)
dr_cli_test(stats_kernel 2 "^dreduce: error: --op stats cannot be used with --kernel smem [(]it runs on the multipass kernel"
            --op stats -k smem)
dr_cli_test(bad_op_lists_new 2 "^dreduce: error: invalid --op 'mean': allowed: .*stats, argmin, argmax" --op mean)
# Closed forms on the CPU backend (verified against the host reference, so exit 0 means that passed too).
dr_cli_check(argmax_iota CODE 0 REGEX "^result: 999 at 999 [(]int64[+]index[)]" OPTS --also "verification: passed"
             ARGS --device cpu --op argmax --type int64 --data iota -n 1000 --iters 2)
dr_cli_check(argmin_const_first CODE 0 REGEX "^result: -3[.]5 at 0 [(]float64[+]index[)]" OPTS --also "verification: passed"
             ARGS --device cpu --op argmin --type float32 --data const:-3.5 -n 100003 --iters 2 --threads 3)
dr_cli_check(argmax_uint8_wraps CODE 0 REGEX "^result: 255 at 255 [(]uint64[+]index[)]" OPTS --also "verification: passed"
             ARGS --device cpu --op argmax --type uint8 --data iota -n 70001 --iters 1)
dr_cli_check(argmax_nan CODE 0 REGEX "^result: nan at 0 [(]float64[+]index[)]" OPTS --also "verification: passed"
             ARGS --device cpu --op argmax --type float16 --data const:nan -n 1000 --iters 1)
# min, max and the bitwise ops of an array with no element have no value (NumPy raises for min and max): "none",
# checked as such; sum and prod are 0 and 1 (empty_array above, and prod here).
foreach(c float32:min float64:max int32:band int16:bor uint64:bxor)
  string(REPLACE ":" ";" tc ${c})
  list(GET tc 0 t)
  list(GET tc 1 op)
  dr_cli_check(${op}_${t}_empty CODE 0 REGEX "^result: none [(]" OPTS --also "verification: passed: ${op} of no elements: none"
               ARGS --device cpu --op ${op} --type ${t} -n 0 --iters 1)
endforeach()
dr_cli_check(json_min_empty CODE 0 REGEX "[\"]value[\"]: [\"]none[\"]"
             OPTS --json-expr "d['result']['value'] == 'none' and d['verification']['pass'] is True"
             ARGS --device cpu --op min --type int8 -n 0 --iters 1 --format json)
dr_cli_check(prod_empty CODE 0 REGEX "^result: 1 [(]" OPTS --also "verification: passed"
             ARGS --device cpu --op prod --type int32 -n 0 --iters 1)
dr_cli_check(argmax_empty CODE 0 REGEX "^result: none [(]float64[+]index[)]" OPTS --also "verification: passed"
             ARGS --device cpu --op argmax --type float64 -n 0 --iters 1)
dr_cli_check(stats_iota CODE 0
             REGEX "^result: count=1000 sum=499500 mean=499[.]5 var_pop=83333[.]25 var_sample=83416[.]6666666666[0-9]* min=0 max=999 [(]stats[(]int64[)][)]"
             OPTS --also "verification: passed: stats of 1000"
             ARGS --device cpu --op stats --type int32 --data iota -n 1000 --iters 2)
dr_cli_check(stats_uint64_past_64_bits CODE 0 REGEX "^result: count=1000 sum=18446744073709551615000 mean=1[.]8446744073709552e[+]19 "
             OPTS --also "verification: passed"
             ARGS --device cpu --op stats --type uint64 --data const:18446744073709551615 -n 1000 --iters 1)
dr_cli_check(stats_empty CODE 0 REGEX "^result: count=0 sum=0 mean=nan var_pop=nan var_sample=nan min=none max=none"
             OPTS --also "verification: passed" ARGS --device cpu --op stats --type float32 -n 0 --iters 1)
dr_cli_check(stats_spread_exact CODE 0 REGEX "verification: passed: stats of 100003" OPTS --also "^result: count=100003 "
             ARGS --device cpu --op stats --type float32 --acc exact --data spread -n 100003 --iters 2 --threads 2)
dr_cli_check(stats_bfloat16_random CODE 0 REGEX "verification: passed: stats of 200003"
             ARGS --device cpu --op stats --type bfloat16 -n 200003 --iters 2 --threads 3)
# JSON and CSV carry every field.
dr_cli_check(json_argmax CODE 0 REGEX "[\"]index[\"]: 999"
             OPTS --json-expr "d['schema_version'] == 6 and d['config']['op'] == 'argmax'"
                  --json-expr "d['result'] == {'value': '999', 'type': 'int64+index', 'index': 999, 'nan_omitted': 0}"
                  --json-expr "d['verification']['pass'] is True and d['verification']['exact'] is True"
             ARGS --device cpu --op argmax --type int16 --data iota -n 1000 --iters 2 --format json)
dr_cli_check(json_argmin_empty CODE 0 REGEX "[\"]index[\"]: null"
             OPTS --json-expr "d['result']['value'] == 'none' and d['result']['index'] is None"
             ARGS --device cpu --op argmin --type uint32 -n 0 --iters 1 --format json)
dr_cli_check(json_stats CODE 0 REGEX "[\"]var_sample[\"]: "
             OPTS --json-expr "d['result']['type'] == 'stats(int64)' and d['result']['count'] == 1000"
                  --json-expr "d['result']['sum'] == '499500' and d['result']['mean'] == '499.5'"
                  --json-expr "float(d['result']['var_pop']) == 83333.25 and float(d['result']['m2']) == 83333250"
                  --json-expr "abs(float(d['result']['var_sample']) - 83333250 / 999) < 1e-9"
                  --json-expr "d['result']['min'] == '0' and d['result']['max'] == '999' and d['verification']['pass']"
             ARGS --device cpu --op stats --type int16 --data iota -n 1000 --iters 2 --format json)
dr_cli_check(csv_stats CODE 0 REGEX "^6,0,.*,total,.*,stats,stats[(]float64[)],.*,pass,,1000,499500,499[.]5,83333[.]25,83416[.]66[0-9]*,0,999,,,,,,,,,,,,,,,,,propagate,0,auto,auto$"
             OPTS --csv-append ${DR_CLI_OUT}/stats.csv
             ARGS --device cpu --op stats --type float64 --data iota -n 1000 --iters 1 --format csv -o ${DR_CLI_OUT}/stats.csv)
dr_cli_check(csv_argmax CODE 0 REGEX "^6,0,.*,total,.*,argmax,.*,999,pass,999,,,,,,,,,,,,,,,,,,,,,,,,propagate,0,auto,auto$"
             OPTS --csv-append ${DR_CLI_OUT}/argmax.csv
             ARGS --device cpu --op argmax --type int64 --data iota -n 1000 --iters 1 --format csv -o ${DR_CLI_OUT}/argmax.csv)

# ---- distributions: --op histogram, quantile, median (dreduce_histogram, dreduce_quantile) ----
dr_cli_test(bins_zero 2 "^dreduce: error: invalid --bins '0': expected an integer in 1[.][.]16777216" --op histogram --bins 0)
dr_cli_test(bins_too_many 2 "^dreduce: error: invalid --bins '16777217'" --op histogram --bins 16777217)
dr_cli_test(bins_garbage 2 "^dreduce: error: invalid --bins '4x'" --op histogram --bins 4x)
dr_cli_test(bins_without_histogram 2 "^dreduce: error: --bins needs --op histogram" --op sum --bins 4)
dr_cli_test(range_reversed 2 "^dreduce: error: invalid --range '3,1': LO '3' is above HI '1'" --op histogram --range 3,1)
dr_cli_test(range_one_number 2 "^dreduce: error: invalid --range '1': one number" --op histogram --range 1)
dr_cli_test(range_nan 2 "^dreduce: error: invalid --range 'nan,1': 'nan' is not finite" --op histogram --range nan,1)
dr_cli_test(range_without_histogram 2 "^dreduce: error: --range needs --op histogram" --op quantile --q 0.5 --range 0,1)
dr_cli_test(q_above_one 2 "^dreduce: error: invalid --q '0.5,1.5': '1.5' is not a quantile in [[]0, 1[]]" --op quantile --q 0.5,1.5)
dr_cli_test(q_empty_item 2 "^dreduce: error: invalid --q '0.5,,0.6': item 2 is empty" --op quantile --q 0.5,,0.6)
dr_cli_test(q_missing 2 "^dreduce: error: --op quantile needs --q" --op quantile)
dr_cli_test(q_with_median 2 "^dreduce: error: --q cannot be used with --op median" --op median --q 0.3)
dr_cli_test(q_without_quantile 2 "^dreduce: error: --q needs --op quantile" --q 0.5)
dr_cli_test(histogram_acc_exact 2 "^dreduce: error: --acc exact cannot be used with --op histogram" --op histogram --acc exact)
dr_cli_test(histogram_kernel 2 "^dreduce: error: --op histogram cannot be used with --kernel smem" --op histogram -k smem)
# Runs on the CPU backend, each checked by the program's own reference (src/cli/reference.h: a binary search over
# the edges; each order statistic counted at its rank).
dr_cli_check(histogram_table CODE 0 REGEX "verification: passed: histogram of 100003: all 16 bins"
             OPTS --also "^result: histogram of 100003 elements in 16 bins" --also "local 1" --also "combine 2"
             ARGS --device cpu --op histogram --bins 16 -n 100003 --iters 2)
dr_cli_check(histogram_range_json CODE 0 REGEX "[\"]counts[\"]: "
             OPTS --json-expr "d['schema_version'] == 6 and d['bins'] == 4 and d['range'] == [0, 1]"
                  --json-expr "d['result']['edges'] == [0, 0.25, 0.5, 0.75, 1] and d['result']['passes'] == 1"
                  --json-expr "sum(d['result']['counts']) + d['result']['below'] + d['result']['above'] == 1000"
                  --json-expr "d['verification']['pass'] is True and d['verification']['deterministic'] is True"
             ARGS --device cpu --op histogram --bins 4 --range 0,1 --type float64 -n 1000 --iters 2 --format json)
dr_cli_check(histogram_iota_int16 CODE 0 REGEX "[\"]counts[\"]: [[]100, 100, 100, 100, 100, 100, 100, 100, 100, 100[]]"
             OPTS --json-expr "d['result']['lo'] == 0 and d['result']['hi'] == 999 and d['result']['passes'] == 2"
             ARGS --device cpu --op histogram --type int16 --data iota -n 1000 --iters 1 --format json)
dr_cli_check(histogram_csv CODE 0 REGEX "^6,0,.*,total,.*,histogram,.*,pass,,1000,,,,,,,0,1,4,0,1,"
             OPTS --csv-append ${DR_CLI_OUT}/histogram.csv
             ARGS --device cpu --op histogram --bins 4 --range 0,1 -n 1000 --iters 1 --format csv -o ${DR_CLI_OUT}/histogram.csv)
dr_cli_check(quantile_json CODE 0 REGEX "[\"]quantiles[\"]: "
             OPTS --json-expr "d['q'] == [0, 0.25, 0.5, 1] and len(d['result']['quantiles']) == 4"
                  --json-expr "[x['value'] for x in d['result']['quantiles']] == ['0', '249.75', '499.5', '999']"
                  --json-expr "d['result']['quantiles'][1]['lower_rank'] == 249 and d['result']['quantiles'][1]['gamma'] == 0.75"
                  --json-expr "d['verification']['pass'] is True and d['result']['passes'] == 6"
             ARGS --device cpu --op quantile --q 0,0.25,0.5,1 --type uint64 --data iota -n 1000 --iters 2 --format json)
dr_cli_check(median_float16 CODE 0 REGEX "verification: passed: 1 quantile[(]s[)] of 100001"
             ARGS --device cpu --op median --type float16 -n 100001 --iters 2 --threads 2)
dr_cli_check(median_nan CODE 0 REGEX "^result: median of 1000 elements.*nan|^  0[.]5 +nan"
             OPTS --also "verification: passed"
             ARGS --device cpu --op median --data const:nan -n 1000 --iters 1)
dr_cli_test(quantile_empty 2 "^dreduce: error: the quantile of an array with no element has no value"
            --device cpu --op quantile --q 0.5 -n 0 --iters 1)
dr_cli_check(histogram_empty CODE 0 REGEX "^result: histogram of 0 elements in 10 bins over [[]0, 1[]]"
             OPTS --also "verification: passed" ARGS --device cpu --op histogram -n 0 --iters 1)
dr_cli_test(histogram_too_many_bins 2 "^dreduce: error: 3000 bins over [[]0, 2047[]] are too many for the range in float16.*Too many bins for data range"
            --device cpu --op histogram --type float16 --data iota -n 5000 --bins 3000 --iters 1)
# bfloat16 OMIT stats over batches whose exponents lie 51-54 apart (tests/cli/bf16_wide_batch.sh): the CPU backend
# here; the GPU's vector and round batches in tests/gpu/cases.cmake (gpu_run_bfloat16_stats_omit_wide_*).
set(DR_BF16_WIDE ${CMAKE_CURRENT_SOURCE_DIR}/cli/bf16_wide_batch.sh)
add_test(NAME cli_bfloat16_stats_omit_wide
         COMMAND bash ${DR_BF16_WIDE} ${DR_EXPECT} $<TARGET_FILE:dreduce> 7 --device cpu --iters 2)
set_tests_properties(cli_bfloat16_stats_omit_wide PROPERTIES LABELS cli TIMEOUT 120 ENVIRONMENT "${DR_TEST_ENV}")
