# SPDX-License-Identifier: MIT
"""Another CPython workload than python_workload.py, for the benchmark row "a new dump of
binaries already indexed": the same interpreter and libraries, reaching other code
(decimal arithmetic, an XML DOM, SQLite, JSON) and so other addresses."""

import decimal
import json
import sqlite3
import xml.dom.minidom

numbers = [decimal.Decimal(i) / 7 for i in range(20000)]
document = xml.dom.minidom.parseString("<a>" + '<b c="1">text</b>' * 5000 + "</a>")
connection = sqlite3.connect(":memory:")
connection.execute("create table t (a)")
connection.executemany("insert into t values (?)", [(str(i),) for i in range(20000)])
rows = connection.execute("select a from t order by a").fetchall()
text = json.dumps([str(n) for n in numbers] + [r[0] for r in rows])
print(len(text), len(document.getElementsByTagName("b")))
