// The Lockstep sample page: plain JavaScript, no libraries. Every URL is relative so the
// page also works behind a context path.
(function () {
	'use strict';

	const LOCKS_POLL_MILLIS = 300;
	const SUMMARY_POLL_MILLIS = 1000;

	const $ = (id) => document.getElementById(id);
	let sku = null;
	let running = false;
	let shownDemo = null;
	const lastRuns = new Map();
	const productNames = new Map();

	async function getJson(url, init) {
		const response = await fetch(url, Object.assign({ headers: { Accept: 'application/json' } }, init));
		const body = await response.json().catch(() => null);
		if (!response.ok) {
			const reason = body && (body.message || body.error);
			throw new Error(response.status + (reason ? ' ' + reason : ''));
		}
		return body;
	}

	function formatMillis(millis) {
		if (millis == null) {
			return '–';
		}
		const digits = millis < 10 ? 2 : millis < 100 ? 1 : 0;
		return millis.toFixed(digits) + ' ms';
	}

	// The one way the page names a product: in the picker and in every result.
	function productLabel(productSku) {
		const name = productNames.get(productSku);
		return name ? name + ' (' + productSku + ')' : productSku;
	}

	function setStatus(text, isError) {
		$('demo-status').textContent = text;
		$('demo-status').classList.toggle('error', Boolean(isError));
	}

	// --- products and summary -------------------------------------------------------------

	async function loadProducts() {
		const products = await getJson('api/products');
		products.forEach((product) => productNames.set(product.sku, product.name));
		const select = $('product');
		select.replaceChildren(...products.map((product) => {
			const option = document.createElement('option');
			option.value = product.sku;
			option.textContent = productLabel(product.sku);
			return option;
		}));
		select.value = products.some((product) => product.sku === 'lamp') ? 'lamp' : products[0].sku;
		sku = select.value;
	}

	async function refreshSummary() {
		if (sku == null) {
			return;
		}
		const summary = await getJson('api/summary?sku=' + encodeURIComponent(sku));
		if (summary.sku !== sku) {
			return; // the selection changed while the request was in flight
		}
		$('stock').textContent = summary.stock;
		$('accepted').textContent = summary.orders.ACCEPTED;
		$('rejected').textContent = summary.orders.REJECTED;
		if (summary.lastDemo) {
			showDemo(summary.lastDemo);
		}
	}

	// --- the demo -------------------------------------------------------------------------

	async function runDemo(locked) {
		if (running) {
			return;
		}
		const params = new URLSearchParams({
			sku: sku,
			orders: $('orders').value,
			stock: $('initial-stock').value,
			instances: $('instances').value,
			locked: String(locked)
		});
		running = true;
		$('run-locked').disabled = true;
		$('run-unlocked').disabled = true;
		setStatus('Running ' + params.get('orders') + ' orders from ' + params.get('instances')
			+ ' instances ' + (locked ? 'with' : 'without') + ' the lock…');
		try {
			const result = await getJson('api/demo?' + params, { method: 'POST' });
			showDemo(result);
			setStatus('Done in ' + result.millis + ' ms.');
			await refreshSummary();
		}
		catch (error) {
			setStatus('The demo failed: ' + error.message, true);
		}
		finally {
			running = false;
			$('run-locked').disabled = false;
			$('run-unlocked').disabled = false;
		}
	}

	function showDemo(result) {
		const key = JSON.stringify(result);
		if (key === shownDemo) {
			return;
		}
		shownDemo = key;
		$('result').hidden = false;
		$('oversold').textContent = result.oversold;
		$('oversold-box').classList.toggle('bad', result.oversold > 0);
		$('oversold-box').classList.toggle('good', result.oversold === 0);
		const perInstance = Object.entries(result.acceptedByInstance)
			.map(([instance, count]) => instance + ': ' + count)
			.join(', ');
		$('result-text').textContent = (result.locked ? 'With the lock' : 'Without the lock') + ' on '
			+ productLabel(result.sku) + ': ' + result.accepted + ' of ' + result.orders + ' orders accepted, '
			+ result.rejected + ' rejected, stock ' + result.initialStock + ' → ' + result.finalStock
			+ ', in ' + result.millis + ' ms. Accepted per instance: ' + (perInstance || 'none') + '.';
		drawChart(result);
		showRuns(result);
	}

	function showRuns(result) {
		lastRuns.set(result.locked, result);
		$('runs-table').hidden = false;
		$('runs').replaceChildren(...[true, false].filter((locked) => lastRuns.has(locked)).map((locked) => {
			const run = lastRuns.get(locked);
			const row = document.createElement('tr');
			row.className = locked ? 'locked' : 'unlocked';
			const oversold = cell(run.oversold);
			oversold.className = run.oversold > 0 ? 'bad' : 'good';
			row.append(cell(locked ? 'With lock' : 'Without lock'), cell(productLabel(run.sku)), cell(run.accepted + ' of ' + run.orders),
				oversold, cell(formatMillis(run.waitP99Millis)));
			return row;
		}));
	}

	function drawChart(result) {
		const buckets = Object.entries(result.waitHistogram);
		const highest = Math.max(1, ...buckets.map(([, count]) => count));
		$('wait-chart').replaceChildren(...buckets.map(([label, count]) => {
			const column = document.createElement('div');
			column.className = 'column';
			const bar = document.createElement('div');
			bar.className = 'bar' + (result.locked ? '' : ' unlocked');
			bar.dataset.count = count;
			bar.style.height = (count / highest * 100) + '%';
			bar.title = count + ' orders waited ' + label;
			const value = document.createElement('span');
			value.className = 'count';
			value.textContent = count > 0 ? count : '';
			const name = document.createElement('span');
			name.className = 'bucket';
			name.textContent = label;
			const track = document.createElement('div');
			track.className = 'track';
			track.append(value, bar);
			column.append(track, name);
			return column;
		}));
		$('chart-caption').textContent = result.orders + ' orders on ' + productLabel(result.sku) + ', '
			+ (result.locked ? 'with the lock: orders per time waited for the lock.'
				: 'without the lock: nothing to wait for, only thread scheduling.');
		$('wait-p50').textContent = formatMillis(result.waitP50Millis);
		$('wait-p90').textContent = formatMillis(result.waitP90Millis);
		$('wait-p99').textContent = formatMillis(result.waitP99Millis);
		$('wait-max').textContent = formatMillis(result.waitMaxMillis);
	}

	// --- held locks -----------------------------------------------------------------------

	function cell(text) {
		const td = document.createElement('td');
		td.textContent = text;
		return td;
	}

	function showLocks(locks) {
		const body = $('held-locks');
		if (locks.length === 0) {
			const row = document.createElement('tr');
			row.className = 'empty';
			const td = cell('No lock held right now.');
			td.colSpan = 5;
			row.append(td);
			body.replaceChildren(row);
			return;
		}
		body.replaceChildren(...locks.map((lock) => {
			const row = document.createElement('tr');
			row.className = 'lock';
			row.append(cell(lock.key), cell(lock.lockName), cell(lock.fencingToken),
				cell(lock.leaseRemaining + (lock.renewed ? ' (renewed)' : '')),
				cell(lock.holderThread));
			return row;
		}));
		const last = locks[locks.length - 1];
		$('last-lock').textContent = 'Last seen: ' + last.key + ', token ' + last.fencingToken + ', at '
			+ new Date().toLocaleTimeString() + '.';
	}

	async function pollLocks() {
		try {
			showLocks((await getJson('actuator/locks')).locks);
			$('locks-live').classList.remove('offline');
		}
		catch (error) {
			$('locks-live').classList.add('offline');
		}
		setTimeout(pollLocks, LOCKS_POLL_MILLIS);
	}

	async function pollSummary() {
		try {
			await refreshSummary();
		}
		catch (error) {
			// shown by the next successful refresh; the locks indicator shows the server is down
		}
		setTimeout(pollSummary, SUMMARY_POLL_MILLIS);
	}

	// --- start ----------------------------------------------------------------------------

	async function start() {
		$('run-locked').addEventListener('click', () => runDemo(true));
		$('run-unlocked').addEventListener('click', () => runDemo(false));
		$('demo-form').addEventListener('submit', (event) => event.preventDefault());
		$('product').addEventListener('change', (event) => {
			sku = event.target.value;
			refreshSummary().catch((error) => setStatus('Could not load the summary: ' + error.message, true));
		});
		pollLocks();
		try {
			await loadProducts();
		}
		catch (error) {
			setStatus('Could not load the products: ' + error.message, true);
			return;
		}
		pollSummary();
	}

	start();
})();
