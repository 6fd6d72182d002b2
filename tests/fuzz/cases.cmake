# The fuzz targets: one per parser of untrusted input (see each file's opening comment for the invariants it checks).
# dr_fuzz_target(name [DICT file]) is in tests/fuzz/CMakeLists.txt; seeds in corpus/<name>/, one input per file.

# dr_parse_count: -n/--count with K M G T / Ki Mi Gi Ti suffixes (a 128-bit model of the grammar; overflow after
# scaling must be an error).
dr_fuzz_target(fuzz_count DICT count.dict)

# dr_parse_const: --data const:V for every element type (integer model; floats rounded once, to nearest even).
dr_fuzz_target(fuzz_const DICT const.dict)

# dr_options_parse: the whole command line, arguments separated by NUL or newline (OK only with runnable options;
# a pure function of argv; parsed values stable when printed back).
dr_fuzz_target(fuzz_options DICT options.dict)

# dr_npy_parse and dr_npy_check_size: the .npy header of an --input file, as file bytes and as header text inside a
# valid 1.0 and 3.0 prefix (a header that parses OK agrees with its prefixes, its size check and its numpy-style
# rewrite; the two prefixes agree; messages are one printable line).
dr_fuzz_target(fuzz_npy DICT npy.dict)

# --acc exact: accum.h's exact sums (dr_exact_t) over raw float64 / float32 / float16 / bfloat16 terms, in two
# orders and splits into partials, against src/cli/reference.c's independent exact sum, bit for bit.
dr_fuzz_target(fuzz_exact DICT exact.dict)
