package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaClient is a kgo client of the test, closed when it ends.
func kafkaClient(t *testing.T, bootstrap string, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestPagesLoad opens each of the console's cluster, topic and message
// pages on a broker with a topic holding records and fails on any console
// error.
func TestPagesLoad(t *testing.T) {
	u, bootstrap := startConsole(t)
	cl, adm := kafkaClient(t, bootstrap)
	ctx := testCtx(t)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "pages-orders"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		r := &kgo.Record{Topic: "pages-orders", Key: []byte("k" + string(rune('a'+i))), Value: []byte(`{"n":` + string(rune('0'+i%10)) + `}`),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("test")}}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t)
	for _, p := range []struct{ hash, shot string }{
		{"#/overview", "overview"},
		{"#/brokers", "brokers"},
		{"#/brokers/1", ""},
		{"#/topics", "topics"},
		{"#/topics/pages-orders", "topic"},
		{"#/topics/pages-orders/configs", "topic-configs"},
		{"#/messages/pages-orders", "messages"},
	} {
		loadPage(t, b, u+"/"+p.hash)
		if p.shot != "" {
			screenshot(t, b, p.shot)
		}
	}
}

// TestCreateTopicAndProduceFromPage creates a topic and produces a record
// with a key, a header and a chosen partition from the pages, then reads
// the record back with a kgo consumer.
func TestCreateTopicAndProduceFromPage(t *testing.T) {
	u, bootstrap := startConsole(t)
	ctx := newBrowser(t)
	loadPage(t, ctx, u+"/#/topics")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`button.create-topic`)),
		chromedp.SetValue(chromedp.CSS(`input.new-topic-name`), "page-made"),
		chromedp.SetValue(chromedp.CSS(`input.new-topic-partitions`), "2"),
		chromedp.Click(chromedp.CSS(`button.submit-topic`)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.body.dataset.ready === "topics" && document.querySelector(".topic-name")?.textContent === "page-made"`)

	loadPage(t, ctx, u+"/#/messages/page-made")
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`select.produce-partition`), "1"),
		chromedp.SetValue(chromedp.CSS(`input.produce-key`), "order-7"),
		chromedp.SetValue(chromedp.CSS(`textarea.produce-value`), `{"qty": 3}`),
		chromedp.SetValue(chromedp.CSS(`textarea.produce-headers`), "trace=abc"),
		chromedp.Click(chromedp.CSS(`button.produce`)),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.body.dataset.produced === "1:0"`)
	// The page reads the topic again after producing: the record shows.
	waitJS(t, ctx, `[...document.querySelectorAll("td.msg-key")].some(td => td.innerText.includes("order-7"))`)

	cl, _ := kafkaClient(t, bootstrap, kgo.ConsumeTopics("page-made"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	rctx := testCtx(t)
	for {
		fs := cl.PollFetches(rctx)
		if err := rctx.Err(); err != nil {
			t.Fatalf("no record produced from the page arrived: %v", err)
		}
		var got *kgo.Record
		fs.EachRecord(func(r *kgo.Record) { got = r })
		if got == nil {
			continue
		}
		if got.Partition != 1 || string(got.Key) != "order-7" || string(got.Value) != `{"qty": 3}` ||
			len(got.Headers) != 1 || got.Headers[0].Key != "trace" || string(got.Headers[0].Value) != "abc" {
			t.Fatalf("consumed %d %q=%q headers %v", got.Partition, got.Key, got.Value, got.Headers)
		}
		break
	}
}
