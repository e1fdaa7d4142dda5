--#include prelude.lua
if ready.status == "True" then
  hs.status = "Healthy"
elseif ready.reason == "DeletionBlocked" or ready.reason == "Deleting" then
  hs.status = "Progressing"
else
  -- ValidationFailed, CredentialsInvalid, or no referenced pool with room
  hs.status = "Degraded"
end
hs.message = message(ready, tostring(ready.reason))
return hs
