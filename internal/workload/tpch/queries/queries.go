package queries

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"text/template"
)

// texts are the 22 queries of the TPC-H specification (§2.4), each once,
// with its substitution parameters as template fields and the dialect's
// spellings as template functions. The only changes to the spec's text
// are those §2.2 allows: date arithmetic and year extraction through the
// functions, LIMIT for the row limits, Q13's derived-table column named
// inside it, Q15's view named per stream so that concurrent streams do not
// collide.
var texts = [Queries]string{
	// Q1 Pricing Summary Report
	`select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
	sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order
from lineitem
where l_shipdate <= {{addDays "1998-12-01" (neg .DELTA)}}
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus`,
	// Q2 Minimum Cost Supplier
	`select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from part, supplier, partsupp, nation, region
where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = {{.SIZE}} and p_type like {{str (print "%" .TYPE)}}
	and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = {{str .REGION}}
	and ps_supplycost = (
		select min(ps_supplycost) from partsupp, supplier, nation, region
		where p_partkey = ps_partkey and s_suppkey = ps_suppkey and s_nationkey = n_nationkey
			and n_regionkey = r_regionkey and r_name = {{str .REGION}})
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100`,
	// Q3 Shipping Priority
	`select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = {{str .SEGMENT}} and c_custkey = o_custkey and l_orderkey = o_orderkey
	and o_orderdate < {{date .DATE}} and l_shipdate > {{date .DATE}}
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10`,
	// Q4 Order Priority Checking
	`select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= {{date .DATE}} and o_orderdate < {{addMonths .DATE 3}}
	and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority`,
	// Q5 Local Supplier Volume
	`select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey and c_nationkey = s_nationkey
	and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = {{str .REGION}}
	and o_orderdate >= {{date .DATE}} and o_orderdate < {{addYears .DATE 1}}
group by n_name
order by revenue desc`,
	// Q6 Forecasting Revenue Change
	`select sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= {{date .DATE}} and l_shipdate < {{addYears .DATE 1}}
	and l_discount between {{.DISCOUNT_LO}} and {{.DISCOUNT_HI}} and l_quantity < {{.QUANTITY}}`,
	// Q7 Volume Shipping
	`select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
	select n1.n_name as supp_nation, n2.n_name as cust_nation, {{year "l_shipdate"}} as l_year,
		l_extendedprice * (1 - l_discount) as volume
	from supplier, lineitem, orders, customer, nation n1, nation n2
	where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
		and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
		and ((n1.n_name = {{str .NATION1}} and n2.n_name = {{str .NATION2}})
			or (n1.n_name = {{str .NATION2}} and n2.n_name = {{str .NATION1}}))
		and l_shipdate between {{date "1995-01-01"}} and {{date "1996-12-31"}}
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year`,
	// Q8 National Market Share
	`select o_year, sum(case when nation = {{str .NATION}} then volume else 0 end) / sum(volume) as mkt_share
from (
	select {{year "o_orderdate"}} as o_year, l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
	from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
	where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey and o_custkey = c_custkey
		and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey and r_name = {{str .REGION}}
		and s_nationkey = n2.n_nationkey and o_orderdate between {{date "1995-01-01"}} and {{date "1996-12-31"}}
		and p_type = {{str .TYPE}}
) as all_nations
group by o_year
order by o_year`,
	// Q9 Product Type Profit Measure
	`select nation, o_year, sum(amount) as sum_profit
from (
	select n_name as nation, {{year "o_orderdate"}} as o_year,
		l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
	from part, supplier, lineitem, partsupp, orders, nation
	where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey and p_partkey = l_partkey
		and o_orderkey = l_orderkey and s_nationkey = n_nationkey and p_name like {{str (print "%" .COLOR "%")}}
) as profit
group by nation, o_year
order by nation, o_year desc`,
	// Q10 Returned Item Reporting
	`select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment
from customer, orders, lineitem, nation
where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= {{date .DATE}}
	and o_orderdate < {{addMonths .DATE 3}} and l_returnflag = 'R' and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20`,
	// Q11 Important Stock Identification
	`select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = {{str .NATION}}
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
	select sum(ps_supplycost * ps_availqty) * {{.FRACTION}}
	from partsupp, supplier, nation
	where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = {{str .NATION}})
order by value desc`,
	// Q12 Shipping Modes and Order Priority
	`select l_shipmode,
	sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
	sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey and l_shipmode in ({{str .SHIPMODE1}}, {{str .SHIPMODE2}})
	and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
	and l_receiptdate >= {{date .DATE}} and l_receiptdate < {{addYears .DATE 1}}
group by l_shipmode
order by l_shipmode`,
	// Q13 Customer Distribution
	`select c_count, count(*) as custdist
from (
	select c_custkey, count(o_orderkey) as c_count
	from customer left outer join orders on c_custkey = o_custkey
		and o_comment not like {{str (print "%" .WORD1 "%" .WORD2 "%")}}
	group by c_custkey
) as c_orders
group by c_count
order by custdist desc, c_count desc`,
	// Q14 Promotion Effect
	`select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
	/ sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from lineitem, part
where l_partkey = p_partkey and l_shipdate >= {{date .DATE}} and l_shipdate < {{addMonths .DATE 1}}`,
	// Q15 Top Supplier: a view created, queried and dropped within the query.
	`create view revenue{{.Stream}} (supplier_no, total_revenue) as
	select l_suppkey, sum(l_extendedprice * (1 - l_discount))
	from lineitem
	where l_shipdate >= {{date .DATE}} and l_shipdate < {{addMonths .DATE 3}}
	group by l_suppkey
;
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue{{.Stream}}
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue{{.Stream}})
order by s_suppkey
;
drop view revenue{{.Stream}}`,
	// Q16 Parts/Supplier Relationship
	`select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from partsupp, part
where p_partkey = ps_partkey and p_brand <> {{str .BRAND}} and p_type not like {{str (print .TYPE "%")}}
	and p_size in ({{join .SIZES}})
	and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size`,
	// Q17 Small-Quantity-Order Revenue
	`select sum(l_extendedprice) / 7.0 as avg_yearly
from lineitem, part
where p_partkey = l_partkey and p_brand = {{str .BRAND}} and p_container = {{str .CONTAINER}}
	and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)`,
	// Q18 Large Volume Customer
	`select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as sum_qty
from customer, orders, lineitem
where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > {{.QUANTITY}})
	and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100`,
	// Q19 Discounted Revenue
	`select sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where (p_partkey = l_partkey and p_brand = {{str .BRAND1}}
		and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= {{.QUANTITY1}} and l_quantity <= {{.QUANTITY1}} + 10 and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = {{str .BRAND2}}
		and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= {{.QUANTITY2}} and l_quantity <= {{.QUANTITY2}} + 10 and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = {{str .BRAND3}}
		and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= {{.QUANTITY3}} and l_quantity <= {{.QUANTITY3}} + 10 and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')`,
	// Q20 Potential Part Promotion
	`select s_name, s_address
from supplier, nation
where s_suppkey in (
		select ps_suppkey from partsupp
		where ps_partkey in (select p_partkey from part where p_name like {{str (print .COLOR "%")}})
			and ps_availqty > (
				select 0.5 * sum(l_quantity) from lineitem
				where l_partkey = ps_partkey and l_suppkey = ps_suppkey
					and l_shipdate >= {{date .DATE}} and l_shipdate < {{addYears .DATE 1}}))
	and s_nationkey = n_nationkey and n_name = {{str .NATION}}
order by s_name`,
	// Q21 Suppliers Who Kept Orders Waiting
	`select s_name, count(*) as numwait
from supplier, lineitem l1, orders, nation
where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
	and l1.l_receiptdate > l1.l_commitdate
	and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
	and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
		and l3.l_receiptdate > l3.l_commitdate)
	and s_nationkey = n_nationkey and n_name = {{str .NATION}}
group by s_name
order by numwait desc, s_name
limit 100`,
	// Q22 Global Sales Opportunity
	`select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (
	select {{substr "c_phone" 1 2}} as cntrycode, c_acctbal
	from customer
	where {{substr "c_phone" 1 2}} in ({{strs .CODES}})
		and c_acctbal > (select avg(c_acctbal) from customer
			where c_acctbal > 0.00 and {{substr "c_phone" 1 2}} in ({{strs .CODES}}))
		and not exists (select * from orders where o_custkey = c_custkey)
) as custsale
group by cntrycode
order by cntrycode`,
}

// Queries is the number of queries.
const Queries = 22

// Overrides are the queries that need a text of their own in a dialect,
// by dialect and query number: none, because the template functions cover
// every difference so far (a test keeps the list short).
var Overrides = map[Dialect]map[int]string{}

// Params are one query's substitution parameters, by the names the texts
// use.
type Params map[string]any

// Validation are the validation values of the specification (§2.4; docs/
// tpch.md part 7), whose answers are published, for scale factor sf (Q11's
// FRACTION is 0.0001/SF).
func Validation(q int, sf float64) Params {
	switch q {
	case 1:
		return Params{"DELTA": 90}
	case 2:
		return Params{"SIZE": 15, "TYPE": "BRASS", "REGION": "EUROPE"}
	case 3:
		return Params{"SEGMENT": "BUILDING", "DATE": "1995-03-15"}
	case 4:
		return Params{"DATE": "1993-07-01"}
	case 5:
		return Params{"REGION": "ASIA", "DATE": "1994-01-01"}
	case 6:
		return Params{"DATE": "1994-01-01", "DISCOUNT": 6, "QUANTITY": 24}
	case 7:
		return Params{"NATION1": "FRANCE", "NATION2": "GERMANY"}
	case 8:
		return Params{"NATION": "BRAZIL", "REGION": "AMERICA", "TYPE": "ECONOMY ANODIZED STEEL"}
	case 9:
		return Params{"COLOR": "green"}
	case 10:
		return Params{"DATE": "1993-10-01"}
	case 11:
		return Params{"NATION": "GERMANY", "FRACTION": fraction(sf)}
	case 12:
		return Params{"SHIPMODE1": "MAIL", "SHIPMODE2": "SHIP", "DATE": "1994-01-01"}
	case 13:
		return Params{"WORD1": "special", "WORD2": "requests"}
	case 14:
		return Params{"DATE": "1995-09-01"}
	case 15:
		return Params{"DATE": "1996-01-01"}
	case 16:
		return Params{"BRAND": "Brand#45", "TYPE": "MEDIUM POLISHED", "SIZES": []int{49, 14, 23, 45, 19, 3, 36, 9}}
	case 17:
		return Params{"BRAND": "Brand#23", "CONTAINER": "MED BOX"}
	case 18:
		return Params{"QUANTITY": 300}
	case 19:
		return Params{"BRAND1": "Brand#12", "BRAND2": "Brand#23", "BRAND3": "Brand#34", "QUANTITY1": 1, "QUANTITY2": 10, "QUANTITY3": 20}
	case 20:
		return Params{"COLOR": "forest", "DATE": "1994-01-01", "NATION": "CANADA"}
	case 21:
		return Params{"NATION": "SAUDI ARABIA"}
	case 22:
		return Params{"CODES": []string{"13", "31", "23", "29", "30", "18", "17"}}
	}
	return nil
}

// fraction is Q11's FRACTION, 0.0001/SF, as an exact decimal literal.
func fraction(sf float64) string {
	return strconv.FormatFloat(0.0001/sf, 'f', -1, 64)
}

var (
	parseOnce sync.Once
	parsed    map[Dialect]*[Queries]*template.Template
)

func parseAll() {
	parsed = map[Dialect]*[Queries]*template.Template{}
	for _, d := range Dialects {
		var ts [Queries]*template.Template
		fm := funcs(d)
		fm["neg"] = func(n int) int { return -n }
		fm["join"] = func(xs []int) string {
			s := make([]string, len(xs))
			for i, x := range xs {
				s[i] = strconv.Itoa(x)
			}
			return strings.Join(s, ", ")
		}
		fm["strs"] = func(xs []string) string {
			s := make([]string, len(xs))
			for i, x := range xs {
				s[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
			}
			return strings.Join(s, ", ")
		}
		for i, text := range texts {
			if o, ok := Overrides[d][i+1]; ok {
				text = o
			}
			ts[i] = template.Must(template.New(fmt.Sprintf("Q%d", i+1)).Funcs(fm).Option("missingkey=error").Parse(text))
		}
		parsed[d] = &ts
	}
}

// Render is query q (1..22) of stream s with parameters p in dialect d:
// its statements in order (Q15: create the view, query it, drop it; the
// others one). The answer is the result of the statement Answer says.
func Render(d Dialect, q, stream int, p Params) ([]string, error) {
	parseOnce.Do(parseAll)
	ts, ok := parsed[d]
	if !ok {
		return nil, fmt.Errorf("tpch: no dialect %q", d)
	}
	if q < 1 || q > Queries {
		return nil, fmt.Errorf("tpch: no query %d", q)
	}
	data := map[string]any{"Stream": stream}
	for k, v := range p {
		data[k] = v
	}
	if q == 6 {
		// DISCOUNT ± 0.01 as exact decimal literals: a binary float
		// computed in SQL (0.06 - 0.01) would miss 0.05 on SQLite.
		n, _ := p["DISCOUNT"].(int)
		data["DISCOUNT_LO"], data["DISCOUNT_HI"] = cents(n-1), cents(n+1)
	}
	var b bytes.Buffer
	if err := ts[q-1].Execute(&b, data); err != nil {
		return nil, fmt.Errorf("tpch: Q%d: %w", q, err)
	}
	var out []string
	for _, st := range strings.Split(b.String(), "\n;\n") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out, nil
}

// Answer is the index of the statement of Render's result whose rows are
// the query's answer.
func Answer(q int) int {
	if q == 15 {
		return 1
	}
	return 0
}

func cents(n int) string { return fmt.Sprintf("0.%02d", n) }

// Session are the statements a session of dialect d runs first: SQLite's
// LIKE is case-insensitive for ASCII unless told (Q9, Q13, Q16 and Q20's
// patterns are case-sensitive in the specification).
func Session(d Dialect) []string {
	if d == SQLite {
		return []string{"PRAGMA case_sensitive_like = ON"}
	}
	return nil
}
