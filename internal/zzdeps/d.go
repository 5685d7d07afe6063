package deps
import (
	_ "github.com/peterh/liner"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/creack/pty"
)
