// Package all enables every workload by blank import: adding a workload is
// one folder and one line here.
package all

import _ "github.com/sledge-bench/sledge/internal/workload/tpcc"   // TPC-C
import _ "github.com/sledge-bench/sledge/internal/workload/script" // pgbench script files
import _ "github.com/sledge-bench/sledge/internal/workload/tpcb"   // pgbench's TPC-B-like builtins
import _ "github.com/sledge-bench/sledge/internal/workload/tpch"   // TPC-H-derived
import _ "github.com/sledge-bench/sledge/internal/workload/ch"     // CH-benCHmark: TPC-C and 22 analytic queries at once
