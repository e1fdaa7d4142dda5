-- Butler health for Argo CD: base and table libraries only, as Argo CD runs custom scripts.
-- An inventory is data written by the reporter; its freshness is judged by the TenantCluster that reads it.
hs = {}
local spec = obj.spec
if type(spec) ~= "table" or spec.observedAt == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the reporter"
  return hs
end
local count = 0
if type(spec.services) == "table" then count = #spec.services end
hs.status = "Healthy"
hs.message = tostring(count) .. " LoadBalancer Service(s) observed at " .. tostring(spec.observedAt)
return hs
