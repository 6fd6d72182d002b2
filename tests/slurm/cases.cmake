# The slurm label: launch/scaling under mpiexec, and the sbatch scripts of slurm/ on a real one-node Slurm that
# tests/slurm/harness.py starts for each test (munged, slurmctld, slurmd on free ports, state in a temporary
# directory, stopped at the end). CPU backend, small sizes. Exit 77 (skipped, reason printed) where the daemons
# cannot run: not root, or munge/Slurm/matplotlib not installed (launch/install-deps installs them).
set(DR_SLURM_HARNESS ${CMAKE_CURRENT_LIST_DIR}/harness.py)
function(dr_slurm_test name)
  add_test(NAME slurm_${name}
           COMMAND python3 ${DR_SLURM_HARNESS} --case ${name} --source ${PROJECT_SOURCE_DIR}
                   --dreduce $<TARGET_FILE:dreduce>)
  set_tests_properties(slurm_${name} PROPERTIES LABELS slurm SKIP_RETURN_CODE 77 TIMEOUT 240 PROCESSORS 2
                       ENVIRONMENT "${DR_TEST_ENV}")
endfunction()

# launch/scaling under mpiexec: 1-2 ranks x weak/strong x float32/int64; the CSV checked against every run's JSON
# (times, GB/s, speedup, efficiency, per-level max-over-nodes medians), the six PNGs, the summary; resume (nothing
# runs again; a deleted and a truncated result are redone, through $MPIEXEC with $MPIEXEC_FLAGS); other dreduce
# options on the same directory refused; a failing run stops the study with its command and message, status 1.
dr_slurm_test(scaling)
# slurm/single.sbatch on 2 tasks: COMPLETED, the exact sum of iota, the per-node report in the job output; a job
# whose dreduce fails ends FAILED with dreduce's message.
dr_slurm_test(single)
# slurm/weak.sbatch on 1 node x 2 tasks: COMPLETED, srun --mpi=pmix (else pmi2), CSV rows for P = 1, 2 x two types,
# weak plots, verified results.
dr_slurm_test(weak)
# slurm/strong.sbatch, then a second job on its results directory (DREDUCE_OUT) that resumes it: nothing runs again.
dr_slurm_test(strong)
