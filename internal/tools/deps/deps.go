//go:build tools

package deps

import (
	_ "github.com/IBM/sarama"
	_ "github.com/chromedp/chromedp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/prometheus/client_model/go"
	_ "github.com/prometheus/common/expfmt"
)
