// Command testclient is the kafka adapter's e2e helper: a service process
// (a seed) writes a record through a slice with it, and the test reads
// what a world can see. Not installed, not part of the adapter.
//
//	testclient produce kafka://host:port TOPIC VALUE
//	testclient consume kafka://host:port TOPIC     (prints the first value)
//	testclient topics  kafka://host:port PREFIX    (one topic a line)
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testclient:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: testclient produce|consume|topics URL ARG [VALUE]")
	}
	u, err := url.Parse(args[1])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(u.Host, ",")...)}
	switch args[0] {
	case "produce":
		if len(args) != 4 {
			return fmt.Errorf("produce needs TOPIC VALUE")
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: args[2], Value: []byte(args[3])}).FirstErr()
	case "consume":
		cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(args[2]), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		for {
			fs := cl.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("no record in %s: %w", args[2], err)
			}
			for _, r := range fs.Records() {
				fmt.Println(string(r.Value))
				return nil
			}
		}
	case "topics":
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		ts, err := kadm.NewClient(cl).ListTopics(ctx)
		if err != nil {
			return err
		}
		names := ts.Names()
		sort.Strings(names)
		for _, t := range names {
			if strings.HasPrefix(t, args[2]) {
				fmt.Println(t)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}
