-- Butler health for Argo CD: base and table libraries only, as Argo CD runs custom scripts.
local function condition(t)
  local conditions = obj.status and obj.status.conditions
  if type(conditions) ~= "table" then return nil end
  for _, c in ipairs(conditions) do
    if c.type == t then return c end
  end
  return nil
end
local function message(c, fallback)
  if c ~= nil and type(c.message) == "string" and c.message ~= "" then return c.message end
  return fallback
end
hs = {}
if type(obj.status) ~= "table" then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report status"
  return hs
end
local ready = condition("Ready")
local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if observed == nil and ready ~= nil then observed = ready.observedGeneration end
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. tostring(generation)
  return hs
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
  return hs
end
local phase = obj.status.phase
local network = condition("NetworkReady")
if phase == "Ready" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
elseif phase == "Failed" or ready.reason == "InvalidSpec" or ready.reason == "AccessDenied" then
  hs.status = "Degraded"
  hs.message = message(ready, tostring(ready.reason))
elseif phase == "Deleting" or ready.reason == "MissingInput" then
  -- Finalizing, or waiting for its Team or ProviderConfig, which a sync may still be creating.
  hs.status = "Progressing"
  hs.message = message(ready, tostring(phase))
elseif network ~= nil and network.status == "False" and network.reason == "PoolExhausted" then
  -- Waiting for addresses that no pool can give: it will not progress by itself.
  hs.status = "Degraded"
  hs.message = message(network, "PoolExhausted")
else
  -- Pending: waiting for addresses.
  hs.status = "Progressing"
  hs.message = message(network, message(ready, tostring(phase)))
end
return hs
