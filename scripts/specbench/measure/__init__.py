"""Measurement: one cell job (job) runs its cells (runner) on a llama-server started and stopped here (server),
under the interrupt guard (guard), sends the one request (client) and writes what was measured (cell_record), served
with its condition's setup (setup)."""
