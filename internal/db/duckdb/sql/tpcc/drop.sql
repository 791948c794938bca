-- Drops the TPC-C schema; indexes go with their tables. sledge_meta first,
-- so an interrupted drop never leaves a schema that looks complete.
DROP TABLE IF EXISTS sledge_meta;
DROP TABLE IF EXISTS order_line;
DROP TABLE IF EXISTS new_order;
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS history;
DROP TABLE IF EXISTS customer;
DROP TABLE IF EXISTS stock;
DROP TABLE IF EXISTS district;
DROP TABLE IF EXISTS warehouse;
DROP TABLE IF EXISTS item;
