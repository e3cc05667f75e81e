-- SPDX-License-Identifier: GPL-2.0
--
-- bench.sql - the database workload of make eval: create, load, index,
-- join, aggregate, update and delete, on a database in memory.  Rows come
-- from a recursive CTE, so the data set is the same on every machine.

CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER,
		    amount REAL, day TEXT);

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO customer SELECT i, 'cust' || i, 'city' || (i * 37 % 50) FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO orders
SELECT i, (i * 7919) % 2000 + 1, (i * 104729 % 100000) / 100.0,
       date('2024-01-01', '+' || (i % 366) || ' days')
FROM n;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_day ON orders(day);

SELECT c.city, count(*), round(sum(o.amount), 2)
FROM orders o JOIN customer c ON c.id = o.customer
GROUP BY c.city ORDER BY 3 DESC LIMIT 5;

SELECT substr(day, 1, 7) AS month, count(*), round(avg(amount), 2)
FROM orders GROUP BY month ORDER BY month;

SELECT name FROM customer
WHERE id IN (SELECT customer FROM orders WHERE amount > 990)
ORDER BY name LIMIT 10;

UPDATE orders SET amount = amount * 1.1 WHERE day LIKE '2024-03%';
DELETE FROM orders WHERE amount < 5;

SELECT count(*), round(sum(amount), 2) FROM orders;
SELECT c.name, max(o.amount) FROM customer c JOIN orders o
ON o.customer = c.id GROUP BY c.id ORDER BY 2 DESC, 1 LIMIT 3;
