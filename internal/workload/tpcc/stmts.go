package tpcc

import "github.com/sledge-bench/sledge/internal/workload"

// Statement names. The text of each lives only in the database packages
// (sql/tpcc/statements.sql and checks.sql); this file is the contract those
// files implement.
//
// Argument rules, for every database:
//   - Arguments are listed below in order; in the SQL text they appear in
//     exactly that order, each once (SQLite ?1..?n, PostgreSQL $1..$n, so a
//     MySQL/MariaDB text can use plain positional ? markers). That is why
//     some values are passed twice (h_amount in payment.customer_update).
//   - Values are int64 (ids, counts, quantities), float64 (money, to the
//     cent) or string. Dates are never passed: the statement uses the
//     database's clock (§2.4.2.2, §2.5.2.2, §2.7.4.2; SQLite CURRENT_TIMESTAMP).
//   - In client, prepared and procedure modes the transactions bind each
//     statement once (workload.Stmt, issue 26): an integer argument is an
//     *int64, money a *float64, a text a *string (c_last) or a *[]byte
//     (s_dist_xx written back, c_data, h_data, neword.call's lists); a
//     result column is read into an *int64, a *float64, a *[]byte (every
//     text, and the display-only dates c_since, o_entry_d and
//     ol_delivery_d, NULL as empty) or a *workload.NullInt64 (o_carrier_id).
//     Batched and pipeline modes pass values (int64, float64, string).
//   - "→" lists the result columns in scan order; "exec" statements return
//     nothing but the affected row count. "(lock)" marks SELECT … FOR UPDATE
//     on databases with row locks; SQLite has none (a writer holds the
//     database lock for the whole transaction), so its text omits it.
const (
	// meta.get () → rows of (name text, value text) from sledge_meta.
	stmtMetaGet = "meta.get"
	// tpcc.nopm () → sum(d_next_o_id) over all districts (int).
	stmtNOPM = "tpcc.nopm"

	// New-Order, §2.4.2.2.
	// neword.warehouse (w_id) → w_tax.
	stmtNOWarehouse = "neword.warehouse"
	// neword.district (w_id, d_id) → d_tax, d_next_o_id. (lock)
	stmtNODistrict = "neword.district"
	// neword.district_update (w_id, d_id) exec: d_next_o_id = d_next_o_id + 1.
	stmtNODistrictUpdate = "neword.district_update"
	// neword.customer (w_id, d_id, c_id) → c_discount, c_last, c_credit.
	stmtNOCustomer = "neword.customer"
	// neword.order (o_id, d_id, w_id, c_id, o_ol_cnt, o_all_local) exec:
	// INSERT INTO orders with o_entry_d = now, o_carrier_id = NULL.
	stmtNOOrder = "neword.order"
	// neword.new_order (o_id, d_id, w_id) exec: INSERT INTO new_order.
	stmtNONewOrder = "neword.new_order"
	// neword.item (i_id) → i_price, i_name, i_data. No row: invalid item.
	stmtNOItem = "neword.item"
	// neword.stock (d_id, i_id, supply_w_id) → s_quantity, s_data,
	// s_dist_<d_id as 01..10> (a CASE on the first argument). (lock)
	stmtNOStock = "neword.stock"
	// neword.stock_update (s_quantity, ol_quantity, remote, i_id,
	// supply_w_id) exec: s_quantity = new value (computed by the caller),
	// s_ytd += ol_quantity, s_order_cnt += 1, s_remote_cnt += remote (0|1).
	stmtNOStockUpdate = "neword.stock_update"
	// neword.order_line (o_id, d_id, w_id, ol_number, i_id, supply_w_id,
	// ol_quantity, ol_amount, ol_dist_info) exec: INSERT INTO order_line with
	// ol_delivery_d = NULL.
	stmtNOOrderLine = "neword.order_line"

	// Payment, §2.5.2.2.
	// payment.warehouse_update (h_amount, w_id) exec: w_ytd += h_amount.
	stmtPayWarehouseUpdate = "payment.warehouse_update"
	// payment.warehouse (w_id) → w_name, w_street_1, w_street_2, w_city,
	// w_state, w_zip.
	stmtPayWarehouse = "payment.warehouse"
	// payment.district_update (h_amount, w_id, d_id) exec: d_ytd += h_amount.
	stmtPayDistrictUpdate = "payment.district_update"
	// payment.district (w_id, d_id) → d_name, d_street_1, d_street_2,
	// d_city, d_state, d_zip.
	stmtPayDistrict = "payment.district"
	// payment.customer_count (c_w_id, c_d_id, c_last) → count(*).
	stmtPayCustomerCount = "payment.customer_count"
	// payment.customer_by_name (c_w_id, c_d_id, c_last, offset) → the
	// customer columns below, ORDER BY c_first, one row at OFFSET offset
	// (= ⌈n/2⌉ − 1). (lock)
	stmtPayCustomerByName = "payment.customer_by_name"
	// payment.customer (c_w_id, c_d_id, c_id) → c_id, c_first, c_middle,
	// c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
	// c_since, c_credit, c_credit_lim, c_discount, c_balance. (lock)
	stmtPayCustomer = "payment.customer"
	// payment.customer_data (c_w_id, c_d_id, c_id) → c_data.
	stmtPayCustomerData = "payment.customer_data"
	// payment.customer_update (h_amount, h_amount, c_w_id, c_d_id, c_id)
	// exec: c_balance −= first, c_ytd_payment += second, c_payment_cnt += 1.
	stmtPayCustomerUpdate = "payment.customer_update"
	// payment.customer_update_bc (h_amount, h_amount, c_data, c_w_id,
	// c_d_id, c_id) exec: as payment.customer_update, and c_data = the new
	// value (already cut to 500 characters by the caller).
	stmtPayCustomerUpdateBC = "payment.customer_update_bc"
	// payment.history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id,
	// h_amount, h_data) exec: INSERT INTO history with h_date = now.
	stmtPayHistory = "payment.history"

	// Order-Status, §2.6.2.2.
	// ostat.customer (w_id, d_id, c_id) → c_balance, c_first, c_middle, c_last.
	stmtOSCustomer = "ostat.customer"
	// ostat.customer_count (w_id, d_id, c_last) → count(*).
	stmtOSCustomerCount = "ostat.customer_count"
	// ostat.customer_by_name (w_id, d_id, c_last, offset) → c_id, c_balance,
	// c_first, c_middle; ORDER BY c_first, one row at OFFSET offset.
	stmtOSCustomerByName = "ostat.customer_by_name"
	// ostat.order (w_id, d_id, c_id) → o_id, o_entry_d, o_carrier_id of the
	// customer's newest order (ORDER BY o_id DESC, one row).
	stmtOSOrder = "ostat.order"
	// ostat.order_lines (w_id, d_id, o_id) → rows of ol_i_id,
	// ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d.
	stmtOSOrderLines = "ostat.order_lines"

	// Delivery, §2.7.4.2, once per district.
	// delivery.oldest (w_id, d_id) → min no_o_id (ORDER BY no_o_id, one
	// row). No row: skip the district. (lock)
	stmtDelOldest = "delivery.oldest"
	// delivery.delete (w_id, d_id, o_id) exec: DELETE FROM new_order; must
	// affect exactly one row.
	stmtDelDelete = "delivery.delete"
	// delivery.order (w_id, d_id, o_id) → o_c_id.
	stmtDelOrder = "delivery.order"
	// delivery.order_update (o_carrier_id, w_id, d_id, o_id) exec.
	stmtDelOrderUpdate = "delivery.order_update"
	// delivery.order_line_update (w_id, d_id, o_id) exec: ol_delivery_d = now.
	stmtDelOrderLineUpdate = "delivery.order_line_update"
	// delivery.order_line_sum (w_id, d_id, o_id) → coalesce(sum(ol_amount), 0).
	stmtDelOrderLineSum = "delivery.order_line_sum"
	// delivery.customer_update (amount, w_id, d_id, c_id) exec:
	// c_balance += amount, c_delivery_cnt += 1.
	stmtDelCustomerUpdate = "delivery.customer_update"

	// Stock-Level, §2.8.2.2.
	// slev.district (w_id, d_id) → d_next_o_id.
	stmtSLDistrict = "slev.district"
	// slev.count (w_id, d_id, low_o_id, next_o_id, threshold) →
	// count(DISTINCT s_i_id) of order lines with low_o_id <= ol_o_id <
	// next_o_id (low_o_id = next_o_id − 20) whose stock row in the same
	// warehouse has s_quantity < threshold.
	stmtSLCount = "slev.count"

	// Batched mode (batched.go): set-oriented statements, each touching the
	// rows of every order line or district at once. A "{k}" argument group
	// is repeated once per row (k ≥ 1, the text's {{…}} groups,
	// internal/db/repeat.go); the rows come back in any order unless said.
	// Batched mode also runs neword.district_update, neword.order,
	// neword.new_order, payment.warehouse_update, payment.district_update,
	// payment.customer_update(_bc), payment.history and ostat.order_lines.
	//
	// neword.header (w_id, d_id, c_id) → w_tax, d_tax, d_next_o_id,
	// c_discount, c_last, c_credit: one join, read after
	// neword.district_update, so d_next_o_id − 1 is the order's number.
	stmtNOHeader = "neword.header"
	// neword.items ({i_id}k) → rows of i_id, i_price, i_name, i_data; an
	// unused item has no row.
	stmtNOItems = "neword.items"
	// neword.stocks (d_id, {i_id, supply_w_id}k) → rows of s_i_id, s_w_id,
	// s_quantity, s_data, s_dist_<d_id>, in (s_w_id, s_i_id) order, which
	// is the order they are locked in. (lock)
	stmtNOStocks = "neword.stocks"
	// neword.stocks_update ({i_id, supply_w_id, s_quantity, ytd, order_cnt,
	// remote_cnt}k) exec: for each distinct stock row once, s_quantity = the
	// final value, and s_ytd, s_order_cnt, s_remote_cnt grow by the sums of
	// its lines.
	stmtNOStocksUpdate = "neword.stocks_update"
	// neword.order_lines ({o_id, d_id, w_id, ol_number, i_id, supply_w_id,
	// ol_quantity, ol_amount, ol_dist_info}k) exec: one multi-row INSERT
	// INTO order_line with ol_delivery_d = NULL.
	stmtNOOrderLines = "neword.order_lines"
	// payment.customer_wd (w_id, d_id, c_w_id, c_d_id, c_id) → w_name,
	// w_street_1, w_street_2, w_city, w_state, w_zip, d_name, d_street_1,
	// d_street_2, d_city, d_state, d_zip, the 15 columns of
	// payment.customer, and c_data when c_credit is 'BC' (else NULL).
	// (lock: the customer; warehouse and district are locked already)
	stmtPayCustomerWD = "payment.customer_wd"
	// payment.customers_wd_by_name (w_id, d_id, c_w_id, c_d_id, c_last) →
	// rows as payment.customer_wd of every customer with that last name,
	// ORDER BY c_first, c_id. (lock)
	stmtPayCustomersWDByName = "payment.customers_wd_by_name"
	// ostat.customer_order (w_id, d_id, c_id) → c_balance, c_first,
	// c_middle, c_last, o_id, o_entry_d, o_carrier_id of the customer's
	// newest order (o_id 0 and NULLs when it has none).
	stmtOSCustomerOrder = "ostat.customer_order"
	// ostat.customers_order_by_name (w_id, d_id, c_last) → rows of c_id,
	// c_balance, c_first, c_middle, o_id, o_entry_d, o_carrier_id as
	// ostat.customer_order, of every customer with that last name, ORDER BY
	// c_first, c_id.
	stmtOSCustomersOrderByName = "ostat.customers_order_by_name"
	// delivery.oldest_all (w_id) → rows of d_id and the oldest no_o_id of
	// that district (0 when it has no new order), for the ten districts in
	// d_id order. No lock: delivery.deletes finds a conflict.
	stmtDelOldestAll = "delivery.oldest_all"
	// delivery.deletes (w_id, {d_id, o_id}k) exec: DELETE FROM new_order;
	// affects k rows unless another Delivery took one first.
	stmtDelDeletes = "delivery.deletes"
	// delivery.orders (w_id, {d_id, o_id}k) → rows of o_d_id, o_c_id,
	// coalesce(sum(ol_amount), 0) of each order.
	stmtDelOrders = "delivery.orders"
	// delivery.orders_update (o_carrier_id, w_id, {d_id, o_id}k) exec.
	stmtDelOrdersUpdate = "delivery.orders_update"
	// delivery.order_lines_update (w_id, {d_id, o_id}k) exec:
	// ol_delivery_d = now.
	stmtDelOrderLinesUpdate = "delivery.order_lines_update"
	// delivery.customers_update ({d_id, c_id, amount}k, w_id) exec:
	// c_balance += amount, c_delivery_cnt += 1 for each customer.
	stmtDelCustomersUpdate = "delivery.customers_update"
	// slev.low_stock (w_id, d_id, threshold) → slev.count's figure, with
	// the window read from the district in the same statement.
	stmtSLLowStock = "slev.low_stock"

	// Procedure mode: one statement per transaction, the whole transaction
	// runs (and commits or rolls back) inside the server. Each returns one
	// row with one integer column.
	//
	// neword.call (w_id, d_id, c_id, o_ol_cnt, item_ids, supply_w_ids,
	// quantities) → o_id. The three lists are comma-separated decimal
	// integers in ol_number order ("12,7,99"), o_ol_cnt entries each. The
	// routine may visit the lines in item order (§2.3.1); an unknown item
	// must roll back and raise an error the database package maps to
	// workload.ErrUserAbort.
	stmtNOCall = "neword.call"
	// payment.call (w_id, d_id, c_w_id, c_d_id, by_name, c_id, c_last,
	// h_amount) → c_id of the customer paid. by_name is 1 (use c_last; c_id
	// is 0) or 0 (use c_id; c_last is '').
	stmtPayCall = "payment.call"
	// delivery.call (w_id, o_carrier_id) → number of districts skipped
	// because they had no new order (0..10).
	stmtDelCall = "delivery.call"
	// slev.call (w_id, d_id, threshold) → the low-stock count.
	stmtSLCall = "slev.call"
	// ostat.call (w_id, d_id, by_name, c_id, c_last) → o_id of the
	// customer's newest order; by_name as in payment.call.
	stmtOSCall = "ostat.call"

	// Consistency checks: "check.<ID>" for each Checks() entry, in checks.sql.
	stmtCheck11Applies = "check.11.applies" // () → orders past 2,100 that were delivered
)

// clientStatements are the statements of the five transactions when the
// client drives them statement by statement.
func clientStatements() []string {
	return []string{
		stmtNOWarehouse, stmtNODistrict, stmtNODistrictUpdate, stmtNOCustomer, stmtNOOrder,
		stmtNONewOrder, stmtNOItem, stmtNOStock, stmtNOStockUpdate, stmtNOOrderLine,
		stmtPayWarehouseUpdate, stmtPayWarehouse, stmtPayDistrictUpdate, stmtPayDistrict,
		stmtPayCustomerCount, stmtPayCustomerByName, stmtPayCustomer, stmtPayCustomerData,
		stmtPayCustomerUpdate, stmtPayCustomerUpdateBC, stmtPayHistory,
		stmtOSCustomer, stmtOSCustomerCount, stmtOSCustomerByName, stmtOSOrder, stmtOSOrderLines,
		stmtDelOldest, stmtDelDelete, stmtDelOrder, stmtDelOrderUpdate, stmtDelOrderLineUpdate,
		stmtDelOrderLineSum, stmtDelCustomerUpdate,
		stmtSLDistrict, stmtSLCount,
	}
}

// procedureStatements are the five calls of procedure mode, in Mix order.
func procedureStatements() []string {
	return []string{stmtNOCall, stmtPayCall, stmtDelCall, stmtSLCall, stmtOSCall}
}

// checkStatements are the statements of Checks().
func checkStatements() []string {
	out := make([]string, 0, 13)
	for _, c := range checks() {
		out = append(out, "check."+c.ID)
	}
	return append(out, stmtCheck11Applies)
}

// Statements names every statement the workload uses in mode m: the
// transactions (client statements, or the five calls in procedure mode),
// meta.get, tpcc.nopm and the checks.
func (w *Workload) Statements(m workload.Mode) []string {
	var out []string
	switch {
	case m.ProcedureLike():
		out = procedureStatements()
	case m == workload.ModeBatched:
		out = batchedStatements()
	default:
		out = clientStatements()
	}
	out = append(out, stmtMetaGet, stmtNOPM)
	return append(out, checkStatements()...)
}
