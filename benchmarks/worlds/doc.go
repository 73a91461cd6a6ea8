// Command worlds measures what N worlds cost, in memory and wall time, two
// ways on one machine:
//
//   - arm A gives every world a private PostgreSQL server: initdb, start,
//     migrate, seed;
//   - arm B is Binky: one server the developer already runs, a golden
//     template migrated and seeded once, and a clone per world
//     (`binky up`).
//
// A third arm, C (--arms c, cow.go), measures disk instead: worlds cloned
// copy-on-write on PostgreSQL 18 through binky-adapter-postgres, by
// template size, beside WAL_LOG copies on the same server.
//
// Worlds are added one at a time up to the largest N of the sweep. After
// each, the arm's memory is the sum of the proportional set size (PSS) of
// every process it keeps running, read when no outside client is visiting
// the shared server; the N-th world's marginal cost is the difference to
// N-1 worlds, and its wall time is how long it took to make. Memory is also
// given with each shared memory segment counted at its whole resident size,
// since PSS misses buffers that only exited backends had touched.
//
// It drives PostgreSQL only through its command-line programs (initdb,
// pg_ctl, psql) and Binky through its CLI, so it links no database driver.
// Everything it creates — servers, data directories, worlds, the golden
// database, the daemon — is removed on exit, Ctrl-C included.
//
//	go run ./benchmarks/worlds --sweep 1,2,4,8 --rows 200000
package main
