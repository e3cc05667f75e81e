-- SPDX-License-Identifier: GPL-2.0
--
-- bench.lua - the interpreter workload of make eval: a little of what
-- Lua scripts do (recursion, closures, tables, string handling, sorting
-- with a comparator, coroutines), deterministic and a few seconds long
-- under the tracer.

local function fib(n)
	if n < 2 then return n end
	return fib(n - 1) + fib(n - 2)
end

local function make_counter()
	local n = 0
	return function(step) n = n + step; return n end
end

local function words(s)
	local t = {}
	for w in s:gmatch("%a+") do t[#t + 1] = w:lower() end
	return t
end

local text = [[
The quick brown fox jumps over the lazy dog while the calling context
of every routine is counted by kcc, which samples events and replays the
last branch records into a forest of bounded height.
]]

local freq = {}
for _ = 1, 300 do
	for _, w in ipairs(words(text)) do
		freq[w] = (freq[w] or 0) + 1
	end
end

local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys, function(a, b)
	if freq[a] ~= freq[b] then return freq[a] > freq[b] end
	return a < b
end)

local c = make_counter()
for i = 1, 20000 do c(i % 7) end

local rows = {}
for i = 1, 3000 do
	rows[i] = { id = i, name = string.format("item%05d", (i * 7919) % 3001),
		    score = (i * 2654435761) % 1000 }
end
table.sort(rows, function(a, b)
	if a.score ~= b.score then return a.score < b.score end
	return a.id < b.id
end)

local gen = coroutine.wrap(function()
	for i = 1, 5000 do coroutine.yield(i * i % 97) end
end)
local acc = 0
for _ = 1, 5000 do acc = acc + gen() end

local parts = {}
for i = 1, 2000 do
	parts[#parts + 1] = ("%d:%s"):format(i, keys[i % #keys + 1]):rep(2)
end
local joined = table.concat(parts, ",")
local n = select(2, joined:gsub("the", "THE"))

print(fib(22), c(0), rows[1].name, acc, #joined, n, keys[1])
