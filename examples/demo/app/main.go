// Command binky-demo-app is the small HTTP service of Binky's demo project:
// it keeps a visit counter in its world's SQLite slice, so two worlds show
// two independent counts.
//
//	binky-demo-app migrate --db PATH   create the schema
//	binky-demo-app seed    --db PATH   insert the first rows
//	binky-demo-app serve   --db PATH --name WORLD   (listens on $PORT)
//	binky-demo-app check   --url URL   exit 0 when URL/healthz answers 200
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: binky-demo-app migrate|seed|serve|check [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	db := fs.String("db", "", "SQLite file (a sqlite:// URL or a path)")
	name := fs.String("name", "", "world name shown on the page")
	url := fs.String("url", "", "base URL to check")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "migrate":
		err = exec(*db, `CREATE TABLE IF NOT EXISTS visits (id INTEGER PRIMARY KEY, at TEXT NOT NULL, note TEXT)`)
	case "seed":
		err = exec(*db, `INSERT INTO visits (at, note) VALUES (datetime('now'), 'seeded')`)
	case "serve":
		err = serve(*db, *name)
	case "check":
		err = check(*url)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky-demo-app:", err)
		os.Exit(1)
	}
}

func open(db string) (*sqlite.Conn, error) {
	if db == "" {
		return nil, fmt.Errorf("--db is required")
	}
	path := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "file:")
	return sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenWAL)
}

func exec(db, sql string) error {
	c, err := open(db)
	if err != nil {
		return err
	}
	defer c.Close()
	return sqlitex.ExecuteTransient(c, sql, nil)
}

func serve(db, name string) error {
	c, err := open(db)
	if err != nil {
		return err
	}
	defer c.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var n int64
		err := sqlitex.ExecuteTransient(c, `INSERT INTO visits (at, note) VALUES (datetime('now'), ?)`, &sqlitex.ExecOptions{Args: []any{r.URL.Path}})
		if err == nil {
			err = sqlitex.ExecuteTransient(c, `SELECT count(*) FROM visits`, &sqlitex.ExecOptions{
				ResultFunc: func(s *sqlite.Stmt) error { n = s.ColumnInt64(0); return nil }})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "hello from world %q: %d visits in this world's database\n", name, n)
	})
	srv := &http.Server{Addr: "127.0.0.1:" + os.Getenv("PORT"), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Printf("listening on %s\n", srv.Addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func check(url string) error {
	resp, err := http.Get(strings.TrimRight(url, "/") + "/healthz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s/healthz: %s", url, resp.Status)
	}
	fmt.Println("healthy:", url)
	return nil
}
