# The multinode label: real multi-node Open MPI jobs on this machine, network namespaces as nodes
# (tests/multinode/netns_harness.py; docs/multinode.md). Each node is a namespace with its own host name, /dev/shm
# and PID namespace and a veth into a bridge; mpirun runs in a head namespace. CPU backend, exact answers. Exit 77
# (skipped, the reason printed) where namespaces cannot be made: not root, no ip/unshare/setpriv, not Open MPI. The
# cases share the namespace names (and the faults want the machine to themselves): RUN_SERIAL.
set(DR_MULTINODE_HARNESS ${CMAKE_CURRENT_LIST_DIR}/netns_harness.py)
function(dr_multinode_test name)
  add_test(NAME multinode_${name}
           COMMAND python3 ${DR_MULTINODE_HARNESS} --dreduce $<TARGET_FILE:dreduce> case ${name})
  set_tests_properties(multinode_${name} PROPERTIES LABELS multinode SKIP_RETURN_CODE 77 TIMEOUT 180 RUN_SERIAL TRUE
                       ENVIRONMENT "${DR_TEST_ENV}")
endfunction()

# 2 nodes x 2 ranks: hierarchical, flat and --allreduce. The report names drn-n1 and drn-n2 as the nodes, each
# rank's host is its namespace, the node level spans each node's ranks and the global level its leader; the result
# is the closed form of tests/mpi/run_cases.py.
dr_multinode_test(two_nodes)
# 3 nodes of 2, 1 and 3 ranks (and 1, 3, 2 with weak scaling and --allreduce), hierarchical and flat.
dr_multinode_test(three_nodes_uneven)
# Faults mid-run (every rank started, then 2 s), --timeout 3: a rank names the level and the nodes that do not answer
# ("no answer from node drn-n2 (ranks 2-3)") within --timeout + 1.5 s, mpirun exits non-zero within 9 s of the fault,
# and no process is left in any namespace. The link of drn-n2 is taken down (ip link set ... down on the bridge side).
dr_multinode_test(link_down)
# The link of drn-n1, the node of rank 0 (the root of every level), taken down: drn-n2's ranks name drn-n1.
dr_multinode_test(link_down_root)
# 3 nodes of 2, 1, 3 ranks: the link of drn-n3 taken down; ranks 3-5 named.
dr_multinode_test(link_down_three)
# Every process of drn-n2 killed (all of its namespace: daemon, ranks), then in a second job only its dreduce ranks:
# the closed connections end the job within about a second, before any --timeout, and the launcher's side names the
# node (the ssh-like agent: "Connection to drn-n2 closed ..."; mpirun: "... rank 3 ... on node drn-n2 exited on
# signal 9"); non-zero within 5 s, nothing left behind.
dr_multinode_test(node_killed)
