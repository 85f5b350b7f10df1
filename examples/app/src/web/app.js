const status = document.createElement('p');
status.id = 'backend-status';
status.textContent = 'checking backend…';
document.getElementById('app').append(status);
fetch('/api/health')
  .then((r) => r.json())
  .then((h) => { status.textContent = `backend: ${h.status}`; })
  .catch(() => { status.textContent = 'backend: unreachable'; });
